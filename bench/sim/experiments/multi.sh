#!/bin/bash
# multi.sh tag "exp" policies seeds... -- simargs
tag=$1; exp=$2; pol=$3; shift 3
seeds=(); while [ "$1" != "--" ]; do seeds+=($1); shift; done; shift
for s in "${seeds[@]}"; do
  NVLB_EXP="$exp" NVLB_EXP_RECOVERY="$EXPR" /work/main/build/tools/sim/nvlblock-sim --racks 128 --seed $s --quiet --threads 1 --policies $pol --json /tmp/exp/$tag-s$s.json "$@" > /dev/null 2>&1 &
  while [ $(jobs -r | wc -l) -ge 2 ]; do sleep 0.2; done
done; wait
