// The skinning inputs as vertex shaders bind them (set SKIN_INPUTS_SET, which the includer
// defines): the `vertex` strategy's, and the forward pass's previous positions. Matches src/render/draw.rs's SkinInputSet and its SKIN_INPUTS_* bindings.
layout(set = SKIN_INPUTS_SET, binding = 0) readonly buffer Sources { SourceVertex sources[]; };
layout(set = SKIN_INPUTS_SET, binding = 1) readonly buffer Influences { Influence influences[]; };
layout(set = SKIN_INPUTS_SET, binding = 2) readonly buffer Palettes { PaletteMatrix palettes[]; } palette_chunks[MAX_CHUNKS];
layout(set = SKIN_INPUTS_SET, binding = 3) readonly buffer MorphTargets { MorphTarget morph_targets[]; };
layout(set = SKIN_INPUTS_SET, binding = 4) readonly buffer MorphDeltas { MorphDelta morph_deltas[]; };
layout(set = SKIN_INPUTS_SET, binding = 5) readonly buffer Motions { uint motions[]; };
layout(set = SKIN_INPUTS_SET, binding = 6) readonly buffer InfluenceOffsets { float influence_offsets[]; };
