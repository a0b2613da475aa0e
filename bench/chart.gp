# bench/chart.gp: bench/results/bench.png from the figures the benches wrote
# to bench/results/*.dat (make bench-chart; gnuplot from Debian's gnuplot-nox).
# One panel per bench: each figure's ratio against its baseline (bars) and
# its target (black marks), on a log scale, since the ratios span 1e-3..1e5.
set terminal pngcairo size 900,1150 font "Sans,9"
set output "bench/results/bench.png"
set datafile commentschars "#"
set style fill solid 0.7 border -1
set boxwidth 0.6
set logscale y
set grid ytics
set xtics rotate by -25 nomirror
set key tmargin right horizontal
set termoption noenhanced
set multiplot layout 3,1 title "luacuda on the simulator (sim backend), 2026-11-22: ratio against a baseline timed in the same run"

set title "host_arrays.lua: Lua tables <-> arrays, element access (baseline: a plain Lua loop; lower is better)"
set ylabel "time / Lua loop"
set yrange [0.3:10]
plot "bench/results/host_arrays.dat" using 0:2:xtic(1) with boxes lc rgb "#4477aa" title "luacuda", \
     "" using 0:3 with points pt 6 ps 2 lc rgb "black" title "target (at most)"

set title "sim_kernels.lua: simulator against native C loops per worker thread, and against Numba's simulator (higher is better)"
set ylabel "throughput ratio"
set yrange [0.0005:1e6]
plot "bench/results/sim_kernels.dat" using 0:2:xtic(1) with boxes lc rgb "#228833" title "luacuda", \
     "" using 0:3 with points pt 6 ps 2 lc rgb "black" title "target (at least)"

set title "transfers.lua: 256 MiB copies against memcpy (higher is better)"
set ylabel "speed / memcpy"
set yrange [0.3:3]
plot "bench/results/transfers.dat" using 0:2:xtic(1) with boxes lc rgb "#cc6677" title "luacuda", \
     "" using 0:3 with points pt 6 ps 2 lc rgb "black" title "target (at least)"
unset multiplot
