# nvlblock-sim plot script; redraw with: gnuplot traces-llm-mix.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
  set terminal pngcairo size 1100,560 font 'sans,10'
} else {
  set terminal png size 1100,560
}
set datafile separator whitespace
set key outside right top
set grid
set xlabel 'time (hours)'
set output "bench/sim/results/traces-llm-mix-utilization.png"
set ylabel 'utilization of healthy nodes'
set format y '%.0f%%'
set yrange [0:105]
set title "128 racks x 18 nodes; synthetic:load=0.85,small_load=0.08,hours=336; failures: llama3; seed 1" noenhanced
plot "bench/sim/results/traces-llm-mix.dat" using 1:2 with lines lw 1.8 dt 1 title "full-rack" noenhanced, \
     "bench/sim/results/traces-llm-mix.dat" using 1:3 with lines lw 1.8 dt 2 title "block" noenhanced, \
     "bench/sim/results/traces-llm-mix.dat" using 1:4 with lines lw 1.8 dt 3 title "nvlblock" noenhanced, \
     "bench/sim/results/traces-llm-mix.dat" using 1:5 with lines lw 1.8 dt 4 title "nvlblock+lend" noenhanced
unset output
set output "bench/sim/results/traces-llm-mix-stranded.png"
set ylabel 'stranded healthy nodes'
set format y '%.0f'
set yrange [0:*]
set title "128 racks x 18 nodes; synthetic:load=0.85,small_load=0.08,hours=336; failures: llama3; seed 1" noenhanced
plot "bench/sim/results/traces-llm-mix.dat" using 1:6 with lines lw 1.8 dt 1 title "full-rack" noenhanced, \
     "bench/sim/results/traces-llm-mix.dat" using 1:7 with lines lw 1.8 dt 2 title "block" noenhanced, \
     "bench/sim/results/traces-llm-mix.dat" using 1:8 with lines lw 1.8 dt 3 title "nvlblock" noenhanced, \
     "bench/sim/results/traces-llm-mix.dat" using 1:9 with lines lw 1.8 dt 4 title "nvlblock+lend" noenhanced
unset output
set output "bench/sim/results/traces-llm-mix-goodput.png"
set ylabel 'useful work / healthy capacity'
set format y '%.0f%%'
set yrange [0:105]
set title "128 racks x 18 nodes; synthetic:load=0.85,small_load=0.08,hours=336; failures: llama3; seed 1" noenhanced
plot "bench/sim/results/traces-llm-mix.dat" using 1:10 with lines lw 1.8 dt 1 title "full-rack" noenhanced, \
     "bench/sim/results/traces-llm-mix.dat" using 1:11 with lines lw 1.8 dt 2 title "block" noenhanced, \
     "bench/sim/results/traces-llm-mix.dat" using 1:12 with lines lw 1.8 dt 3 title "nvlblock" noenhanced, \
     "bench/sim/results/traces-llm-mix.dat" using 1:13 with lines lw 1.8 dt 4 title "nvlblock+lend" noenhanced
unset output
