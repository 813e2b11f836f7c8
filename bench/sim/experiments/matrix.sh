#!/bin/bash
# matrix.sh workload config seeds...
W=$1; C=$2; shift 2
case $W in
 philly) A="--trace ./data/traces/philly_scaled2304.csv --preemptible-share 0.2 --failures llama3";;
 llm) A="--trace synthetic:load=0.85,small_load=0.08,hours=336 --horizon 14d --warmup 2d --failures llama3";;
 sat) A="--trace synthetic:load=saturate,small_load=0.08,max_slices=1 --failures p=2%,mttr=20h --horizon 30d --warmup 1d";;
 kalos) A="--trace synthetic:load=saturate,small_load=0.08 --failures p=2%,mttr=20h --horizon 30d --warmup 1d";;
 hpc1) A="--trace bench/sim/experiments/hpc1.csv --failures p=1%,mttr=20h";;
 hpc2) A="--trace bench/sim/experiments/hpc2.csv --failures p=2%,mttr=20h";;
 hpc3) A="--trace bench/sim/experiments/hpc3.csv --failures llama3";;
esac
unset EXPR NVLB_EXP_ZERO NVLB_EXP_NOBUDGET NVLB_EXP_BUDGET_S; E=""; P=nvlblock; X=""
case $C in
 block) P=block;;
 lend) P=nvlblock+lend;;
 C1) E="  spare_hold: prefer;packing: slices"; EXPR="  evict: true";;
 C2) E="  spare_hold: prefer"; EXPR="  evict: true";;
 C3) export NVLB_EXP_ZERO=1; EXPR="  evict: true"; X="--spares 0";;
 C4) E="  spare_hold: prefer;packing: slices";;
 C3n) export NVLB_EXP_ZERO=1 NVLB_EXP_NOBUDGET=1; EXPR="  evict: true"; X="--spares 0";;
 C3w) export NVLB_EXP_ZERO=1; EXPR="  evict: true"; X="--spares 0 --recovery-wait 60";;
 C3h) export NVLB_EXP_ZERO=1 NVLB_EXP_BUDGET_S=3600; EXPR="  evict: true"; X="--spares 0";;
 C3q) export NVLB_EXP_ZERO=1 NVLB_EXP_BUDGET_S=900; EXPR="  evict: true"; X="--spares 0";;
 C5) P=nvlblock+lend; X="--spares 1"; EXPR="  evict: true";;
 L2) P=nvlblock+lend; EXPR="  evict: true";;
esac
export EXPR
./multi.sh $W-$C "$E" $P "$@" -- $A $X
