# bench/chart.gp: bench/results/bench.png from the figures the benches wrote
# to bench/results/*.dat (make bench-chart; gnuplot from Debian's gnuplot-nox).
# One panel per bench: each figure's ratio against its baseline (bars) and
# its target (black marks), on a log scale, since the ratios span 1e-3..1e5.
# Each panel's title carries the date its .dat file was written (the second
# field of its header line), so a bench run again dates its own panel.
set terminal pngcairo size 1500,2250 font "Sans,9"
set output "bench/results/bench.png"
set datafile commentschars "#"
set style fill solid 0.7 border -1
set boxwidth 0.6
set logscale y
set grid ytics
set xtics rotate by -20 nomirror
set key inside top right opaque box
set termoption noenhanced
set bmargin 10
set rmargin 16
dated(bench) = system("sed -n '1s/^# [^,]*, \\([^,]*\\),.*/\\1/p' bench/results/" . bench . ".dat")
set multiplot layout 4,2 title "luacuda on the simulator (sim backend): each figure against a baseline timed in the same run"

set title "host_arrays.lua, " . dated("host_arrays") . ": Lua tables <-> arrays, element access\n(baseline: a plain Lua loop; lower is better)"
set ylabel "time / Lua loop"
set yrange [0.3:10]
plot "bench/results/host_arrays.dat" using 0:2:xtic(1) with boxes lc rgb "#4477aa" title "luacuda", \
     "" using 0:3 with points pt 6 ps 2 lc rgb "black" title "target (at most)"

set title "sim_kernels.lua, " . dated("sim_kernels") . ": kernels against native C loops per worker thread,\nand against Numba's simulator (higher is better)"
set ylabel "throughput ratio"
set yrange [0.0005:1e8]
plot "bench/results/sim_kernels.dat" using 0:2:xtic(1) with boxes lc rgb "#228833" title "luacuda", \
     "" using 0:3 with points pt 6 ps 2 lc rgb "black" title "target (at least)"

set title "transfers.lua, " . dated("transfers") . ": 256 MiB copies against memcpy (higher is better)"
set ylabel "speed / memcpy"
set yrange [0.3:3]
plot "bench/results/transfers.dat" using 0:2:xtic(1) with boxes lc rgb "#cc6677" title "luacuda", \
     "" using 0:3 with points pt 6 ps 2 lc rgb "black" title "target (at least)"

set title "compile.lua, " . dated("compile") . ": a new kernel's compile against the host compiler's least\nshared object (a ratio), and a disk-cache hit (milliseconds); lower is better"
set ylabel "ratio, or ms for a cache hit"
set yrange [0.5:20]
plot "bench/results/compile.dat" using 0:2:xtic(1) with boxes lc rgb "#aa3377" title "luacuda", \
     "" using 0:3 with points pt 6 ps 2 lc rgb "black" title "target (at most)"

set title "array_math.lua, " . dated("array_math") . ": array math against C loops per worker thread (higher is better),\nand the first a + b of a process (milliseconds; lower is better)"
set ylabel "throughput ratio, or ms"
set yrange [0.01:20]
plot "bench/results/array_math.dat" using 0:2:xtic(1) with boxes lc rgb "#66ccee" title "luacuda", \
     "" using 0:3 with points pt 6 ps 2 lc rgb "black" title "target (the line says which side)"

set title "reduce.lua, " . dated("reduce") . ": a:sum() of 2^24 float32 against a C loop, per worker thread\n(higher is better)"
set ylabel "throughput ratio"
set yrange [0.1:10]
set xrange [-1:1]
plot "bench/results/reduce.dat" using 0:2:xtic(1) with boxes lc rgb "#ccbb44" title "luacuda", \
     "" using 0:3 with points pt 6 ps 2 lc rgb "black" title "target (at least)"

set title "dist.lua, " . dated("dist") . ": comm:allreduce of 64 MiB float32 on 4 ranks against\nMPI_Allreduce from C in the same job (higher is better)"
set ylabel "throughput ratio"
set yrange [0.1:3]
set xrange [-0.5:2.5]
plot "bench/results/dist.dat" using 0:2:xtic(1) with boxes lc rgb "#ee7733" title "luacuda", \
     "" using 0:3 with points pt 6 ps 2 lc rgb "black" title "target (at least)"
unset multiplot
