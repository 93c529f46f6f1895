// scene.js - the mechanism as three.js objects: one group per drawn body
// (its pose set by the playback), the shapes `mbsens view` listed in body
// coordinates, springs, contact planes, the ground frame and gravity.
import * as THREE from 'three';
import { STLLoader } from 'three/examples/jsm/loaders/STLLoader.js';
import { OBJLoader } from 'three/examples/jsm/loaders/OBJLoader.js';
import { ColladaLoader } from 'three/examples/jsm/loaders/ColladaLoader.js';
import { mergeGeometries } from 'three/examples/jsm/utils/BufferGeometryUtils.js';

const PALETTE = [0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759, 0x76b7b2, 0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f];
const JOINT_COLOR = 0xd9822b;
const POINT_COLOR = 0x2a2f3a;

export function decodeBase64(s) {
  const bin = atob(s);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes.buffer;
}

// one material per colour and opacity (fewer state changes when drawing)
const materials = new Map();
function material(color, opacity = 1) {
  const c = new THREE.Color(color);
  const key = c.getHexString() + '/' + opacity;
  if (!materials.has(key)) materials.set(key, new THREE.MeshLambertMaterial({ color: c, transparent: opacity < 1, opacity }));
  return materials.get(key);
}

// row-major 3x3 R and p into a Matrix4
function placement(R, p) {
  const m = new THREE.Matrix4();
  m.set(R[0], R[1], R[2], p[0], R[3], R[4], R[5], p[1], R[6], R[7], R[8], p[2], 0, 0, 0, 1);
  return m;
}

// a mesh whose local y axis runs from a to b
function rod(a, b, radius, mat) {
  const va = new THREE.Vector3(...a), vb = new THREE.Vector3(...b);
  const d = vb.clone().sub(va);
  const len = d.length();
  const g = new THREE.CylinderGeometry(radius, radius, len, 10);
  const m = new THREE.Mesh(g, mat);
  m.position.copy(va).addScaledVector(d, 0.5);
  m.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), d.normalize());
  return m;
}

// orient an object's local `from` axis along `dir`
function alignTo(obj, dir, from = new THREE.Vector3(0, 1, 0)) {
  const v = new THREE.Vector3(...dir);
  if (v.lengthSq() > 0) obj.quaternion.setFromUnitVectors(from, v.normalize());
}

function jointMesh(s, r) {
  const mat = material(JOINT_COLOR);
  const t = s.jtype;
  const grp = new THREE.Group();
  let m;
  if (t === 'spherical' || t === 'floating') {
    m = new THREE.Mesh(new THREE.SphereGeometry(1.9 * r, 12, 8), mat);
  } else if (t === 'fixed') {
    m = new THREE.Mesh(new THREE.BoxGeometry(2.6 * r, 2.6 * r, 2.6 * r), mat);
  } else if (t === 'prismatic') {
    m = new THREE.Mesh(new THREE.BoxGeometry(1.6 * r, 5 * r, 1.6 * r), mat);
    alignTo(m, s.axis);
  } else if (t === 'planar') {
    m = new THREE.Mesh(new THREE.CylinderGeometry(2.4 * r, 2.4 * r, 0.8 * r, 20), mat);
    alignTo(m, s.axis);
  } else {   // revolute, cylindrical, cardan: a short cylinder along the (first) axis
    m = new THREE.Mesh(new THREE.CylinderGeometry(1.6 * r, 1.6 * r, 4.5 * r, 12), mat);
    alignTo(m, s.axis);
  }
  if (!(t === 'cardan' && s.axis2)) {
    m.position.set(...s.p);
    return m;
  }
  grp.add(m);
  const m2 = new THREE.Mesh(new THREE.CylinderGeometry(1.3 * r, 1.3 * r, 4 * r, 12), mat);
  alignTo(m2, s.axis2);
  grp.add(m2);
  grp.position.set(...s.p);
  return grp;
}

function meshFromFile(s, mat) {
  const buf = decodeBase64(s.mesh.data);
  const fmt = s.mesh.format;
  if (fmt === 'stl') return new THREE.Mesh(new STLLoader().parse(buf), mat);
  const text = new TextDecoder().decode(buf);
  if (fmt === 'obj') {
    const o = new OBJLoader().parse(text);
    o.traverse((c) => { if (c.isMesh) c.material = mat; });
    return o;
  }
  const dae = new ColladaLoader().parse(text, '');
  dae.scene.traverse((c) => { if (c.isMesh) c.material = mat; });
  return dae.scene;
}

function primitive(s, mat) {
  const sz = s.size;
  let obj;
  if (s.kind === 'box') obj = new THREE.Mesh(new THREE.BoxGeometry(sz[0], sz[1], sz[2]), mat);
  else if (s.kind === 'sphere') obj = new THREE.Mesh(new THREE.SphereGeometry(sz[0], 24, 16), mat);
  else if (s.kind === 'cylinder') {
    obj = new THREE.Mesh(new THREE.CylinderGeometry(sz[0], sz[0], sz[1], 24), mat);
    obj.geometry.rotateX(Math.PI / 2);   // URDF cylinders run along z
  } else {
    obj = meshFromFile(s, mat);
    obj.scale.set(sz[0], sz[1], sz[2]);
  }
  const holder = new THREE.Group();
  holder.add(obj);
  holder.applyMatrix4(placement(s.R, s.p));
  return holder;
}

function shapeObject(s, data, bodyColor) {
  const r = data.radius;
  const color = s.color && s.color[3] >= 0 ? new THREE.Color(s.color[0], s.color[1], s.color[2]) : bodyColor;
  const opacity = s.color && s.color[3] >= 0 ? s.color[3] : 1;
  switch (s.kind) {
    case 'rod': return rod(s.a, s.b, r, material(bodyColor));
    case 'joint': return jointMesh(s, r);
    case 'point': {
      const m = new THREE.Mesh(new THREE.SphereGeometry(0.9 * r, 8, 6), material(POINT_COLOR));
      m.position.set(...s.p);
      return m;
    }
    case 'com': {
      const m = new THREE.Mesh(new THREE.SphereGeometry(1.3 * r, 10, 8), material(0xffffff));
      m.position.set(...s.p);
      return m;
    }
    case 'contact': {   // a contact sphere: see-through, left out of the camera fit
      const m = new THREE.Mesh(new THREE.SphereGeometry(s.size[0], 16, 10),
        new THREE.MeshBasicMaterial({ color: 0x6b7280, wireframe: true, transparent: true, opacity: 0.25 }));
      m.position.set(...s.p);
      m.userData.noFit = true;
      return m;
    }
    case 'ring': {
      const m = new THREE.Mesh(new THREE.TorusGeometry(s.size[0], 0.08 * s.size[0], 10, 48), material(0x30343c));
      alignTo(m, s.axis, new THREE.Vector3(0, 0, 1));
      m.position.set(...s.p);
      return m;
    }
    default: return primitive(s, material(color, opacity));
  }
}

function labelAll(obj, label, env = false) {
  obj.traverse((c) => { c.userData.label = label; c.userData.env = env || !!obj.userData.noFit; });
}

// ground frame, gravity arrow and contact planes
function addEnvironment(scene, data, up) {
  const S = data.size;
  const axes = new THREE.AxesHelper(0.35 * S);
  labelAll(axes, 'ground frame (x red, y green, z blue)', true);
  scene.add(axes);
  const g = new THREE.Vector3(...data.gravity);
  if (g.lengthSq() > 0) {
    const dir = g.clone().normalize();
    const origin = new THREE.Vector3().addScaledVector(up, 0.6 * S);
    const arrow = new THREE.ArrowHelper(dir, origin, 0.45 * S, 0x7a3fb0, 0.12 * S, 0.06 * S);
    labelAll(arrow, `gravity ${g.length().toPrecision(4)} m/s\u00b2`, true);
    scene.add(arrow);
  }
  for (const pl of data.planes) {
    const grid = new THREE.GridHelper(40 * S, 80, 0x9aa3b2, 0xc9ced8);
    grid.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), new THREE.Vector3(...pl.n).normalize());
    grid.position.set(...pl.p);
    labelAll(grid, 'contact plane', true);
    scene.add(grid);
  }
}

// The simple meshes of a body that share a material become one mesh (fewer
// draw calls: what costs most when WebGL runs in software); the triangles
// of each keep their name for hover in userData.ranges.
function mergeBody(grp) {
  const byMaterial = new Map();
  for (const c of grp.children) {
    if (!c.isMesh || c.children.length || !c.geometry.index || c.userData.noFit) continue;
    if (!byMaterial.has(c.material)) byMaterial.set(c.material, []);
    byMaterial.get(c.material).push(c);
  }
  for (const [mat, list] of byMaterial) {
    if (list.length < 2) continue;
    const geoms = [], ranges = [];
    let start = 0;
    for (const m of list) {
      m.updateMatrix();
      const g = m.geometry.clone().applyMatrix4(m.matrix);
      geoms.push(g);
      ranges.push({ start, end: start + g.index.count, label: m.userData.label });
      start += g.index.count;
      grp.remove(m);
    }
    const merged = new THREE.Mesh(mergeGeometries(geoms), mat);
    merged.userData.ranges = ranges;
    merged.userData.label = ranges[0].label;
    grp.add(merged);
  }
}

// the name of what a ray hit: a merged mesh knows it per triangle
export function hitLabel(hit) {
  const r = hit.object.userData.ranges;
  if (!r || hit.faceIndex == null) return hit.object.userData.label;
  const k = 3 * hit.faceIndex;
  const found = r.find((x) => k >= x.start && k < x.end);
  return found ? found.label : hit.object.userData.label;
}

export function buildScene(data) {
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xeef0f4);
  const g = new THREE.Vector3(...data.gravity);
  const up = g.lengthSq() > 0 ? g.clone().normalize().negate() : new THREE.Vector3(0, 0, 1);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x8d8f96, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.7);
  sun.position.copy(up).multiplyScalar(10 * data.size).add(new THREE.Vector3(3, 2, 1).multiplyScalar(data.size));
  scene.add(sun);
  addEnvironment(scene, data, up);
  const groups = data.bodies.map((b, i) => {
    const grp = new THREE.Group();
    grp.name = b.name;
    grp.matrixAutoUpdate = true;
    if (b.drawn) scene.add(grp);
    grp.userData.color = new THREE.Color(PALETTE[(i + PALETTE.length - 1) % PALETTE.length]);
    if (i === 0) grp.userData.color = new THREE.Color(0x8a919e);
    return grp;
  });
  for (const s of data.shapes) {
    const grp = groups[s.body];
    const obj = shapeObject(s, data, grp.userData.color);
    labelAll(obj, s.label || data.bodies[s.body].name);
    grp.add(obj);
  }
  groups.forEach(mergeBody);
  return { scene, groups, up };
}

// the spring lines: one segment per spring, ends in body coordinates
export function buildSprings(scene, data) {
  const n = data.springs.length;
  const pos = new Float32Array(6 * Math.max(n, 1));
  const geom = new THREE.BufferGeometry();
  geom.setAttribute('position', new THREE.BufferAttribute(pos, 3));
  const lines = new THREE.LineSegments(geom, new THREE.LineBasicMaterial({ color: 0x1b8a5a }));
  lines.frustumCulled = false;
  labelAll(lines, 'spring');
  if (n > 0) scene.add(lines);
  const local = data.springs.map((s) => [new THREE.Vector3(...s.p[0]), new THREE.Vector3(...s.p[1])]);
  const tmp = new THREE.Vector3();
  return function update(groups) {
    data.springs.forEach((s, k) => {
      for (let e = 0; e < 2; e++) {
        tmp.copy(local[k][e]).applyMatrix4(groups[s.b[e]].matrixWorld);
        pos.set([tmp.x, tmp.y, tmp.z], 6 * k + 3 * e);
      }
    });
    geom.attributes.position.needsUpdate = true;
    geom.computeBoundingSphere();
  };
}
