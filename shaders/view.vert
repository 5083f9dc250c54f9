// view.vert: one triangle that covers the viewport (no vertex buffers; draw 3 vertices with
// an empty vertex array). The fragment shader works from gl_FragCoord alone. Shared by the
// view pass (view.frag) and the evaluator (evaluate.frag).
void main() {
  vec2 corner = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
  gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
