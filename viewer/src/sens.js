// sens.js - the gradient of `mbsens sensitivity --json` as a coloured
// table (rows: objectives, columns: parameters; colour: the sign and the
// size relative to the row's largest entry) and one bar chart per objective.

function fmt(x) {
  return x === null || x === undefined ? 'n/a' : Number(x).toPrecision(4);
}

// diverging colour: blue for negative, red for positive, white for zero
function cellColor(v, scale) {
  if (v === null || !(scale > 0)) return '#ffffff';
  const a = Math.min(1, Math.abs(v) / scale);
  const [r, g, b] = v >= 0 ? [215, 48, 39] : [49, 104, 189];
  const mix = (c) => Math.round(255 + (c - 255) * a);
  return `rgb(${mix(r)}, ${mix(g)}, ${mix(b)})`;
}

function table(s) {
  const t = document.createElement('table');
  t.className = 'grad';
  const head = t.insertRow();
  ['objective', 'psi'].concat(s.parameters).forEach((h) => {
    const th = document.createElement('th');
    th.textContent = h;
    head.appendChild(th);
  });
  s.objectives.forEach((o, i) => {
    const row = t.insertRow();
    const scale = Math.max(...s.gradient[i].map((v) => Math.abs(v ?? 0)));
    const name = row.insertCell();
    name.textContent = o;
    name.style.textAlign = 'left';
    row.insertCell().textContent = fmt(s.psi[i]);
    s.gradient[i].forEach((v) => {
      const c = row.insertCell();
      c.textContent = fmt(v);
      c.style.background = cellColor(v, scale);
      c.dataset.value = v;
    });
  });
  return t;
}

function bars(s, i) {
  const div = document.createElement('div');
  div.className = 'bars';
  div.dataset.objective = s.objectives[i];
  const scale = Math.max(...s.gradient[i].map((v) => Math.abs(v ?? 0))) || 1;
  s.parameters.forEach((p, j) => {
    const v = s.gradient[i][j] ?? 0;
    const bar = document.createElement('div');
    bar.className = 'bar';
    bar.innerHTML = '<span class="name"></span><div class="track"><div class="fill"></div><div class="axis">' +
      '</div></div><span class="val"></span>';
    bar.querySelector('.name').textContent = p;
    bar.querySelector('.val').textContent = fmt(s.gradient[i][j]);
    const fill = bar.querySelector('.fill');
    const w = 50 * Math.abs(v) / scale;
    fill.style.width = w + '%';
    fill.style.left = (v >= 0 ? 50 : 50 - w) + '%';
    fill.style.background = v >= 0 ? '#d73027' : '#3168bd';
    div.appendChild(bar);
  });
  return div;
}

export function buildSensitivity(container, s) {
  if (!s) {
    container.innerHTML = '<p class="note">No sensitivity result: give <code>--sensitivity RESULT.json</code> ' +
      '(from <code>mbsens sensitivity --json</code>).</p>';
    return;
  }
  const h = document.createElement('h3');
  h.textContent = `dpsi/drho (${s.method}, ${s.formulation}, dt ${s.dt}, tf ${s.tf})`;
  container.appendChild(h);
  container.appendChild(table(s));
  s.objectives.forEach((o, i) => {
    const hh = document.createElement('h3');
    hh.textContent = `${o}: gradient`;
    container.appendChild(hh);
    container.appendChild(bars(s, i));
  });
}
