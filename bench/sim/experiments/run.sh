#!/bin/bash
# usage: run.sh name "exp" sim-args...
name=$1; exp=$2; shift 2
NVLB_EXP="$exp" NVLB_EXP_RECOVERY="$EXPR" /work/main/build/tools/sim/nvlblock-sim --racks 128 --seed 1 --quiet --json /tmp/exp/$name.json "$@" > /tmp/exp/$name.txt 2>&1
