/*
 * large_models.h - large generated models, as text, for the load benchmark
 * (bench/bench_load.c) and the load test (tests/test_load_large.c). Each
 * returns a malloc'd NUL-terminated text (free() it) and aborts if memory
 * runs out. n >= 3.
 */
#ifndef MBS_LARGE_MODELS_H
#define MBS_LARGE_MODELS_H

/* The spatial chain of mbs_generate_chain_json (revolute joints), at any n
 * (that generator stops at 256 links): n links with points "base" and
 * "tip", joints placed by point names with q0 and qd0, parameters "m1" and
 * "L1". */
char *mbs_large_chain_json(int n);

/* A chain that uses every kind of name look-up of the JSON format: n
 * bodies with 4 named points and a vector each; revolute joints placed by
 * point names; a joint_spring per joint (joint by name); a spring_damper
 * between consecutive bodies (qualified point names "linkK.side"); a
 * parameter per body (target "linkK.mass"); an output per body (point
 * "linkK.tip"); one objective with two terms per body (a point and a
 * coordinate by name). */
char *mbs_large_full_json(int n);

/* A URDF chain of n moving links on revolute joints with limits, every
 * tenth with a sensor link fixed to it (merged into its body: a named point
 * and 3 vectors). */
char *mbs_large_chain_urdf(int n);

/* A ladder: a chain of n bodies b1..bn on revolute joints, and rungs from
 * b(k-2) to bk (k = 3..n), revolute and spherical in turn: n - 2 closed
 * loops, all cut automatically. */
char *mbs_large_ladder_json(int n);

#endif
