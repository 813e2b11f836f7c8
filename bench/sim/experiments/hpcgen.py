# HPC-like synthetic trace: Poisson arrivals, sizes log-uniform over power-of-two classes, lognormal durations.
import random, math, sys
seed=int(sys.argv[1]); load=float(sys.argv[2]); days=float(sys.argv[3]); out=sys.argv[4]
small_share=float(sys.argv[5]) if len(sys.argv)>5 else 0.45
random.seed(seed)
N=2304
classes=[(1,1,small_share),(2,4,0.2),(5,16,0.18),(17,64,0.12),(65,256,0.05)]
tot=sum(c[2] for c in classes); classes=[(a,b,p/tot) for a,b,p in classes]
def size():
    r=random.random()
    for a,b,p in classes:
        if r<p:
            return int(round(math.exp(random.uniform(math.log(a),math.log(b+0.999)))-0.49)) if b>a else a
        r-=p
    return 1
def dur():
    return int(min(48*3600,max(60,random.lognormvariate(math.log(3600),1.3))))
# mean node-seconds per job
samples=[size()*dur() for _ in range(20000)]
mean_ns=sum(samples)/len(samples)
rate=load*N/mean_ns
t=0.0; rows=[]; i=0
while t<days*86400:
    t+=random.expovariate(rate); i+=1
    s=max(1,min(N//4,size())); rows.append((i,int(t),s,4,dur()))
with open(out,'w') as f:
    f.write("job_id,submit_s,nodes,gpus_per_node,duration_s,priority,user_vc\n")
    for r in rows: f.write("%d,%d,%d,%d,%d,,\n"%r)
print(len(rows),"jobs")
