// What both forward vertex shaders (forward.vert: skinned buffer; forward_skinning.vert: the
// `vertex` strategy) hand to forward.frag, and the per-model texture coordinates they read.
layout(set = 0, binding = 2) readonly buffer TexCoords { vec2 texcoords[]; };

layout(location = 0) out vec3 out_normal;
layout(location = 1) out vec2 out_uv;
layout(location = 2) out vec4 out_light_clip;
layout(location = 3) out vec4 out_tangent;
