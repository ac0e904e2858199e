#version 450
// The plain streaming read that is every Vulkan row's ceiling: 16-byte loads, grid-stride; the XOR of everything read
// is stored only when it equals a value it cannot have in practice, so the loads cannot be dropped.
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer Src { uvec4 SRC[]; };
layout(std430, binding = 3) writeonly buffer Sink { uint SINK[]; };
layout(push_constant) uniform Push { uint n; } PC;

void main()
{
    uvec4 acc = uvec4(0u);
    for (uint i = gl_GlobalInvocationID.x; i < PC.n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x)
        acc ^= SRC[i];
    const uint v = acc.x ^ acc.y ^ acc.z ^ acc.w;
    if (v == 0x9e3779b9u)
        SINK[0] = v;
}
