// plots.js - the curves beside the 3D view (uPlot), one plot per group of
// series (coordinates, energy, constraint violation, objective integrands),
// with a cursor line at the playback time; a click seeks to that time.
import uPlot from 'uplot';
import { decodeBase64 } from './scene.js';

const COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7',
  '#9c755f', '#bab0ac'];
const TITLES = {
  coordinates: 'Coordinates q',
  energy: 'Energy [J]',
  violation: 'Constraint violation (2-norms)',
  objectives: 'Objective integrands g(t)',
};
const SHOWN = 8;

function tick(v) {
  if (v === 0) return '0';
  const a = Math.abs(v);
  return a >= 1e4 || a < 1e-2 ? v.toExponential(1) : String(+v.toPrecision(4));
}   // series shown at first; the legend toggles the others

export function buildPlots(container, data, t, onSeek) {
  const groups = [];
  for (const s of data.series) {
    let g = groups.find((x) => x.name === s.group);
    if (!g) groups.push(g = { name: s.group, series: [] });
    g.series.push({ name: s.name, values: new Float32Array(decodeBase64(s.data)) });
  }
  const width = Math.max(300, container.clientWidth - 16);
  const plots = groups.map((g) => {
    const div = document.createElement('div');
    div.className = 'plot';
    div.dataset.group = g.name;
    const h = document.createElement('h3');
    h.textContent = TITLES[g.name] || g.name;
    div.appendChild(h);
    container.appendChild(div);
    const opts = {
      width, height: 190,
      scales: { x: { time: false } },
      axes: [{ label: 't [s]', size: 36 }, { size: 64, values: (u, vals) => vals.map(tick) }],
      cursor: { drag: { x: true, y: false } },
      legend: { live: false },
      series: [{ label: 't' }].concat(g.series.map((s, k) => ({
        label: s.name, stroke: COLORS[k % COLORS.length], width: 1.25, show: k < SHOWN,
      }))),
    };
    const u = new uPlot(opts, [t, ...g.series.map((s) => s.values)], div);
    const line = document.createElement('div');
    line.className = 'cursor';
    u.over.appendChild(line);
    u.over.addEventListener('click', (e) => {
      const idx = u.posToIdx(e.offsetX);
      if (idx != null) onSeek(idx);
    });
    return { group: g.name, names: g.series.map((s) => s.name), u, line };
  });
  return {
    plots,
    setTime(time) {
      for (const p of plots) p.line.style.left = p.u.valToPos(time, 'x') + 'px';
    },
    // the value plotted for series `name` at sample `idx` (read from the plot's own data)
    value(name, idx) {
      for (const p of plots) {
        const k = p.names.indexOf(name);
        if (k >= 0) return p.u.data[k + 1][idx];
      }
      return undefined;
    },
  };
}
