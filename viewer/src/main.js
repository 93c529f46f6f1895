// main.js - the page `mbsens view` writes: reads the embedded data, builds
// the scene, the plots and the sensitivity tables, and plays the run back.
// The page computes no dynamics: it places every body at the poses the
// command computed (linear and spherical-linear interpolation between
// stored frames) and transforms body-fixed points with them.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import 'uplot/dist/uPlot.min.css';
import { buildScene, buildSprings, decodeBase64, hitLabel } from './scene.js';
import { buildPlots } from './plots.js';
import { buildSensitivity } from './sens.js';

const $ = (id) => document.getElementById(id);

function readData() {
  return JSON.parse($('mbs-data').textContent);
}

// stored frames: times (Float64), poses (Float32, frame-major: body, then x y z qw qx qy qz)
function readFrames(data) {
  const f = data.frames;
  return {
    n: f.n,
    t: new Float64Array(decodeBase64(f.t)),
    bodies: f.bodies,
    poses: new Float32Array(decodeBase64(f.poses)),
  };
}

function fitCamera(camera, controls, scene, up, size) {
  const box = new THREE.Box3();
  scene.traverse((o) => { if (o.isMesh && !o.userData.env) box.expandByObject(o); });
  const c = box.isEmpty() ? new THREE.Vector3() : box.getCenter(new THREE.Vector3());
  const r = box.isEmpty() ? size : Math.max(0.5 * box.getSize(new THREE.Vector3()).length(), 0.2 * size);
  const side = Math.abs(up.z) > 0.9 ? new THREE.Vector3(1.0, -1.6, 0) : new THREE.Vector3(0.35, 0, 1.6);
  side.addScaledVector(up, 0.55).normalize();
  camera.position.copy(c).addScaledVector(side, 2.8 * r);
  camera.near = r / 100;
  camera.far = r * 400;
  camera.updateProjectionMatrix();
  controls.target.copy(c);
  controls.update();
}

function start() {
  const data = readData();
  const F = readFrames(data);
  const view = $('view3d');
  $('title').textContent = data.title;
  document.title = `mbsens view: ${data.model}`;

  const renderer = new THREE.WebGLRenderer({ antialias: false });
  renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
  view.insertBefore(renderer.domElement, view.firstChild);
  const { scene, groups, up } = buildScene(data);
  const updateSprings = buildSprings(scene, data);
  const camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
  camera.up.copy(up);
  const controls = new OrbitControls(camera, renderer.domElement);
  controls.enableDamping = false;

  let dirty = true;
  const resize = () => {
    const w = view.clientWidth, h = view.clientHeight;
    renderer.setSize(w, h, false);
    camera.aspect = w / Math.max(h, 1);
    camera.updateProjectionMatrix();
    dirty = true;
  };
  new ResizeObserver(resize).observe(view);
  resize();
  controls.addEventListener('change', () => { dirty = true; });

  // ---- poses
  const qa = new THREE.Quaternion(), qb = new THREE.Quaternion();
  const nb = F.bodies.length;
  const setPose = (time) => {
    let k = 0, hi = F.n - 1;
    if (time >= F.t[hi]) k = hi;
    else if (time > F.t[0]) {
      while (hi - k > 1) { const mid = (k + hi) >> 1; if (F.t[mid] <= time) k = mid; else hi = mid; }
    }
    const k1 = Math.min(k + 1, F.n - 1);
    const span = F.t[k1] - F.t[k];
    const a = span > 0 ? Math.min(Math.max((time - F.t[k]) / span, 0), 1) : 0;
    for (let j = 0; j < nb; j++) {
      const o0 = 7 * (k * nb + j), o1 = 7 * (k1 * nb + j), P = F.poses;
      const g = groups[F.bodies[j]];
      g.position.set(P[o0] + a * (P[o1] - P[o0]), P[o0 + 1] + a * (P[o1 + 1] - P[o0 + 1]),
        P[o0 + 2] + a * (P[o1 + 2] - P[o0 + 2]));
      qa.set(P[o0 + 4], P[o0 + 5], P[o0 + 6], P[o0 + 3]);
      qb.set(P[o1 + 4], P[o1 + 5], P[o1 + 6], P[o1 + 3]);
      g.quaternion.slerpQuaternions(qa, qb, a).normalize();
    }
    scene.updateMatrixWorld();
    updateSprings(groups);
    return k;
  };

  // ---- trace of a chosen point (its positions at every stored frame)
  const traceSel = $('trace');
  const points = data.points.concat(data.bodies.map((b, i) => ({ name: `${b.name} (origin)`, body: i, p: [0, 0, 0] }))
    .filter((p) => p.body > 0 && F.bodies.includes(p.body)));
  points.forEach((p, i) => {
    const o = document.createElement('option');
    o.value = String(i);
    o.textContent = p.name;
    traceSel.appendChild(o);
  });
  const traceGeom = new THREE.BufferGeometry();
  const trace = new THREE.Line(traceGeom, new THREE.LineBasicMaterial({ color: 0xd62728 }));
  trace.frustumCulled = false;
  scene.add(trace);
  const buildTrace = () => {
    const sel = traceSel.value;
    trace.visible = sel !== '';
    if (!trace.visible) { dirty = true; return; }
    const p = points[Number(sel)], j = F.bodies.indexOf(p.body);
    const arr = new Float32Array(3 * F.n), v = new THREE.Vector3(), q = new THREE.Quaternion();
    for (let k = 0; k < F.n; k++) {
      const o = 7 * (k * nb + j), P = F.poses;
      q.set(P[o + 4], P[o + 5], P[o + 6], P[o + 3]);
      v.set(...p.p).applyQuaternion(q);
      arr[3 * k] = v.x + P[o]; arr[3 * k + 1] = v.y + P[o + 1]; arr[3 * k + 2] = v.z + P[o + 2];
    }
    traceGeom.setAttribute('position', new THREE.BufferAttribute(arr, 3));
    dirty = true;
  };
  traceSel.addEventListener('change', buildTrace);
  const chosen = points.findIndex((p) => p.name === data.trace);
  if (chosen >= 0) traceSel.value = String(chosen);
  buildTrace();

  // ---- playback state and controls
  const slider = $('slider'), playBtn = $('play'), speedSel = $('speed'), follow = $('follow');
  slider.max = String(F.n - 1);
  let time = F.t[0], playing = false, last = null, frameIdx = 0;
  const followBody = groups[F.bodies[0]];
  let plots = null, widgetsAt = -Infinity;
  // the slider, the time and the plot cursors: every 100 ms while playing
  // (each update repaints part of the page, which costs frames in software)
  const showWidgets = (now) => {
    widgetsAt = now;
    slider.value = String(frameIdx);
    $('time').textContent = `t = ${time.toFixed(3)} s`;
    if (plots) plots.setTime(time);
  };
  const show = (tm, now) => {
    time = tm;
    const before = followBody.position.clone();
    frameIdx = setPose(time);
    if (follow.checked) {
      const d = followBody.position.clone().sub(before);
      camera.position.add(d);
      controls.target.add(d);
    }
    traceGeom.setDrawRange(0, frameIdx + 1);
    if (now === undefined || now - widgetsAt >= 100) showWidgets(now ?? performance.now());
    dirty = true;
  };
  const seek = (idx) => show(F.t[Math.max(0, Math.min(F.n - 1, idx))]);
  const setPlaying = (p) => {
    playing = p && F.n > 1;
    if (playing && time >= F.t[F.n - 1]) show(F.t[0]);
    playBtn.innerHTML = playing ? '&#10074;&#10074;' : '&#9654;';
    last = null;
  };
  slider.addEventListener('input', () => seek(Number(slider.value)));
  playBtn.addEventListener('click', () => setPlaying(!playing));
  window.addEventListener('keydown', (e) => {
    if (e.code === 'Space' && e.target.tagName !== 'INPUT' && e.target.tagName !== 'SELECT') {
      e.preventDefault();
      setPlaying(!playing);
    }
  });

  // ---- side panel
  document.querySelectorAll('#tabs button').forEach((b) => b.addEventListener('click', () => {
    document.querySelectorAll('#tabs button').forEach((x) => x.classList.toggle('active', x === b));
    document.querySelectorAll('.tab').forEach((x) => { x.hidden = x.id !== b.dataset.tab; });
  }));
  if (data.series.length) plots = buildPlots($('plots'), data, F.t, seek);
  else $('plots').innerHTML = '<p class="note">No trajectory: give a CSV from <code>mbsens simulate</code>.</p>';
  buildSensitivity($('sens'), data.sensitivity);
  if (!data.series.length && data.sensitivity) document.querySelector('#tabs [data-tab="sens"]').click();
  const info = $('info');
  info.innerHTML = '<h3>Model</h3><ul class="items"></ul>';
  for (const line of data.info) {
    const li = document.createElement('li');
    li.textContent = line;
    info.querySelector('ul').appendChild(li);
  }
  follow.checked = !!data.follow;

  // ---- hover: names of bodies, joints and points
  const ray = new THREE.Raycaster(), mouse = new THREE.Vector2(), tip = $('tooltip');
  ray.params.Line.threshold = data.radius;
  let hover = null;
  renderer.domElement.addEventListener('pointermove', (e) => { hover = e; });
  renderer.domElement.addEventListener('pointerleave', () => { hover = null; tip.hidden = true; });
  const pick = () => {
    if (!hover) return;
    const r = renderer.domElement.getBoundingClientRect();
    mouse.set(((hover.clientX - r.left) / r.width) * 2 - 1, -((hover.clientY - r.top) / r.height) * 2 + 1);
    ray.setFromCamera(mouse, camera);
    const hit = ray.intersectObjects(scene.children, true).find((h) => h.object.userData.label && h.object.visible);
    tip.hidden = !hit;
    if (hit) {
      tip.textContent = hitLabel(hit);
      tip.style.left = (hover.clientX - r.left + 14) + 'px';
      tip.style.top = (hover.clientY - r.top + 10) + 'px';
    }
    hover = null;
  };

  // ---- the loop, with the page's own frame counter
  const stats = { framesDrawn: 0, fps: 0, windowStart: performance.now(), windowFrames: 0 };
  const loop = (now) => {
    if (playing) {
      if (last !== null) {
        let tm = time + (now - last) / 1000 * Number(speedSel.value);
        if (tm >= F.t[F.n - 1]) { tm = F.t[F.n - 1]; setPlaying(false); }
        show(tm, playing ? now : undefined);
      }
      last = now;
    }
    pick();
    if (dirty) {
      renderer.render(scene, camera);
      dirty = false;
      stats.framesDrawn++;
      stats.windowFrames++;
    }
    if (now - stats.windowStart >= 1000) {
      stats.fps = stats.windowFrames * 1000 / (now - stats.windowStart);
      stats.windowStart = now;
      stats.windowFrames = 0;
      $('fps').textContent = playing ? `${stats.fps.toFixed(0)} fps` : '';
    }
    requestAnimationFrame(loop);
  };
  show(F.t[0]);
  fitCamera(camera, controls, scene, up, data.size);
  requestAnimationFrame(loop);

  // ---- for tests and scripts
  window.mbsViewer = {
    ready: true,
    frames: F.n,
    stats,
    time: () => time,
    frame: () => frameIdx,
    seek,
    play: () => setPlaying(true),
    pause: () => setPlaying(false),
    playing: () => playing,
    setSpeed: (s) => { speedSel.value = String(s); },
    bodyPosition: (name) => {
      const g = groups.find((x) => x.name === name);
      return g ? g.position.toArray() : null;
    },
    bodyQuaternion: (name) => {
      const g = groups.find((x) => x.name === name);
      return g ? [g.quaternion.w, g.quaternion.x, g.quaternion.y, g.quaternion.z] : null;
    },
    // page coordinates of a body's origin on the screen
    screenPosition: (name) => {
      const g = groups.find((x) => x.name === name);
      if (!g) return null;
      const v = g.position.clone().project(camera), r = renderer.domElement.getBoundingClientRect();
      return [r.left + (v.x + 1) / 2 * r.width, r.top + (1 - v.y) / 2 * r.height];
    },
    plotValue: (name, idx) => (plots ? plots.value(name, idx) : undefined),
    plotGroups: () => (plots ? plots.plots.map((p) => ({ group: p.group, series: p.names })) : []),
    render: () => { renderer.render(scene, camera); },
  };
}

start();
