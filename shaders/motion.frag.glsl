#version 460
// Motion pass: makes the frame's image from the forward pass's resolved colour and velocity target
// (src/render/passes/motion.rs). Motion blur: each pixel averages the scene along its own motion,
// the stretch a shutter open for `shutter` of the frame would have seen, centred on the pixel (a
// per-pixel blur: a moving edge smears inside its silhouette, not over the still background behind it;
// docs/motion-vectors.md says what a reconstruction filter adds). The `motion` debug view: each
// pixel's motion as a colour (direction as hue, length as strength) over the dimmed scene.
layout(set = 0, binding = 0) uniform sampler2D scene_color;
layout(set = 0, binding = 1) uniform sampler2D velocity_target;

layout(push_constant) uniform Push {
    float shutter;     // the fraction of the frame's motion the blur spans (0.5: a 180° shutter)
    float max_pixels;  // the longest streak, pixels
    uint show;         // 1: the motion debug view instead of the blur
    float full_pixels; // the debug view's motion at full strength, pixels
} push;

layout(location = 0) out vec4 color;

const uint MAX_TAPS = 24u;

void main() {
    ivec2 pixel = ivec2(gl_FragCoord.xy);
    vec2 motion = texelFetch(velocity_target, pixel, 0).xy;
    vec4 scene = texelFetch(scene_color, pixel, 0);
    if (push.show != 0u) {
        float strength = clamp(length(motion) / push.full_pixels, 0.0, 1.0);
        float angle = atan(motion.y, motion.x);
        vec3 hue = 0.5 + 0.5 * cos(angle + vec3(0.0, 2.0944, 4.1888));
        color = vec4(mix(scene.rgb * 0.15, hue, strength), 1.0);
        return;
    }
    vec2 streak = motion * push.shutter;
    float span = length(streak);
    if (span > push.max_pixels) {
        streak *= push.max_pixels / span;
        span = push.max_pixels;
    }
    // Under half a pixel the streak stays within the pixel: the scene as it is.
    if (span < 0.5) {
        color = scene;
        return;
    }
    uint taps = min(uint(ceil(span)) + 1u, MAX_TAPS);
    vec2 size = vec2(textureSize(scene_color, 0));
    vec4 sum = vec4(0.0);
    for (uint i = 0u; i < taps; ++i) {
        float t = float(i) / float(taps - 1u) - 0.5;
        sum += textureLod(scene_color, (gl_FragCoord.xy + streak * t) / size, 0.0);
    }
    color = sum / float(taps);
}
