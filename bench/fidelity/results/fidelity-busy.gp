# bench/fidelity/run plot script; redraw with: gnuplot fidelity-busy.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
  set terminal pngcairo size 1100,700 font 'sans,10'
} else {
  set terminal png size 1100,700
}
set output 'fidelity-busy.png'
set multiplot layout 2,1 title 'Busy nodes (of 72), real Slurm vs nvlblock-sim, 10-s means'
set ylabel 'busy nodes'
set yrange [0:74]
set grid
set key bottom right
set arrow from 600,0 to 600,74 nohead dt 2 lc rgb 'gray'
set title 'topology/block'
plot 'fidelity-busy.dat' using 1:2 with lines lw 2 title 'real Slurm', '' using 1:3 with lines lw 2 title 'nvlblock-sim'
set xlabel 'seconds since the start of the replay'
set title 'topology/nvlblock'
plot 'fidelity-busy.dat' using 1:4 with lines lw 2 title 'real Slurm', '' using 1:5 with lines lw 2 title 'nvlblock-sim'
unset multiplot
