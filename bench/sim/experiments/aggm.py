import json,sys,glob
# aggm.py workload config... : mean ratio vs block per class (seeds), violations count
def load(f):
    d=json.load(open(f)); return {p['policy']:p for p in d['policies']}
W=sys.argv[1]
for C in sys.argv[2:]:
    files=sorted(glob.glob('/tmp/exp/%s-%s-s*.json'%(W,C)))
    tot={}; viol=0; n=0; gp=0; ip=0; rs=0; p95=[]
    for f in files:
        seed=f.split('-s')[-1].replace('.json','')
        b=load('/tmp/exp/%s-block-s%s.json'%(W,seed))['block']
        p=list(load(f).values())[0]
        n+=1; gp+=p['goodput']-b['goodput']
        for k,v in p['wait_s'].items():
            bv=b['wait_s'][k]
            if v['count']<20: continue
            for q in ('p50','p95'):
                ok= v[q]<=max(bv[q]*1.05,bv[q]+60)
                if not ok: viol+=1
                tot.setdefault(k+q,[]).append((v[q]+1)/(bv[q]+1))
        m=p['restarts'].get('multi_node',{})
        if m: ip+=m['in_place']; rs+=m['restarts']; p95.append(m['delay_s']['p95'])
    s="%-6s %-6s n%d gp%+.2f viol %2d |"%(W,C,n,100*gp/max(n,1),viol)
    for k,v in tot.items():
        g=1
        for x in v: g*=x
        g=g**(1/len(v))
        s+=" %s %.2f"%(k.replace('gpus_','').replace('all','A'),g)
    s+=" | ip %.0f%% p95 %s"%(100*ip/max(rs,1), [int(x) for x in p95])
    print(s)
