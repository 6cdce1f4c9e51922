# Written by bench_balance: the spec's Fig. 4 from d12-bench_balance.csv (run it in this folder: gnuplot d12-bench_balance.png.gp)
set datafile separator ','
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1280,640 noenhanced font 'sans,10' } else { set terminal png size 1280,640 }
set output 'd12-bench_balance.png'
set title 'Saxpy, 50M floats, under a CPU load step: share of the work on the CPU and execution time'
set xlabel 'execution'
set ylabel 'CPU share (%)'
set y2label 'execution time (ms)'
set xrange [0:300]
set yrange [0:100]
set y2range [0:*]
set ytics nomirror
set y2tics
set grid ytics
set key outside top center horizontal
set object 1 rect from 100, graph 0 to 200, graph 1 behind fillcolor rgb '#f4cccc' fillstyle solid 1.0 noborder
set label 1 'CPU load on' at 150, graph 0.96 center
plot 'd12-bench_balance.csv' using 'n':(column('cpu_share')*100) with steps lw 2 lc rgb '#1f77b4' title 'CPU share', \
  'd12-bench_balance.csv' using 'n':(column('oracle_cpu_share')*100) with steps dt 2 lc rgb '#2ca02c' title 'oracle CPU share (best static split)', \
  'd12-bench_balance.csv' using 'n':'wall_ms' axes x1y2 with lines lc rgb '#7f7f7f' title 'execution time (ms)', \
  'd12-bench_balance.csv' using (column('n')+1):(column('balance_level')==1 ? column('cpu_share_after')*100 : NaN) with points pt 7 ps 1.3 lc rgb '#ff7f0e' title 'level 1 (L1): share moved', \
  'd12-bench_balance.csv' using (column('n')+1):(column('balance_level')==2 ? column('cpu_share_after')*100 : NaN) with points pt 5 ps 1.5 lc rgb '#d62728' title 'level 2 (L2): retrained'
