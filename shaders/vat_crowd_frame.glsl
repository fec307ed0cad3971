// vat_crowd's GPU-driven crowd frame: culls every actor, picks its level of detail and writes
// each (model, level, view or shadow) MultiMesh's instances and indirect draw counts.
//
// Compiled by the library at run time (RenderingDevice.shader_compile_spirv_from_source) after
// `#version` and the `#define` lines of vat_core::crowd::glsl_defines(), which hold every layout
// constant and offset below: this file has no number of its own. The tests of the crowd frame
// (rust/vat_core/src/crowd/frame_classify.rs) are the reference; this is the same arithmetic.
//
// Modes (push constant `mode`):
// - MODE_CLASSIFY, one thread per actor: its class (culled, a level, shadow-only, not casting)
//   into `classes`, read first as last frame's class for the level's hysteresis; counts per
//   level into `counters`.
// - MODE_FILL, one thread per instance of one model: appends the instance to one slot when its
//   actor's class puts it there (a 3x4 identity transform and custom data = (actor, look)).
// - MODE_COMMANDS, one thread: the slot's instance count (at most its capacity) into every
//   surface's indirect command.

layout(local_size_x = GPU_GROUP_SIZE, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) uniform sampler2D placements;
layout(set = 0, binding = 1) uniform sampler2D states;
layout(set = 0, binding = 2) uniform sampler2DArray recent;
layout(set = 0, binding = 3, std430) restrict readonly buffer Params { float p[]; };
layout(set = 0, binding = 4, std430) restrict buffer Classes { uint classes[]; };
layout(set = 0, binding = 5, std430) restrict buffer Counters { uint counters[]; };
layout(set = 0, binding = 6, std430) restrict readonly buffer List { uint list[]; };
layout(set = 0, binding = 7, std430) restrict writeonly buffer Instances { vec4 instances[]; };
layout(set = 0, binding = 8, std430) restrict buffer Commands { uint commands[]; };

layout(push_constant, std430) uniform Push {
	uint mode;
	uint count;    // actors (classify) or the model's instances (fill)
	uint slot;     // the slot's counter (fill, commands)
	uint level;    // the slot's level
	uint shadow;   // 1: a shadow-only slot
	uint last;     // the model's last level
	uint capacity; // instances the slot's MultiMesh holds
	uint surfaces; // surfaces of the slot's mesh (commands)
} pc;

const float FLT_MAX = 3.402823466e+38;
const float TAU = 6.28318530717958647692;

shared uint group_counts[MAX_LEVELS + 2];
shared uint group_taken;
shared uint group_base;

vec4 p4(uint at) {
	return vec4(p[at], p[at + 1], p[at + 2], p[at + 3]);
}

ivec2 data_coord(uint index) {
	return ivec2(index % DATA_TEXTURE_WIDTH, index / DATA_TEXTURE_WIDTH);
}

bool finite3(vec3 v) {
	return !any(isinf(v)) && !any(isnan(v));
}

// Clip `clip`'s bounds (min, max) in the character's space; past the table, the union of all.
void clip_bounds(uint clip, out vec3 lo, out vec3 hi) {
	uint clips = uint(p[P_SHAPE]);
	uint at = P_CLIPS + CLIP_WORDS * min(clip, clips);
	lo = p4(at).xyz;
	hi = p4(at + 4).xyz;
}

// True if the box (centre c, half extents e), moved by each of 0 and `sweep`, stays outside one
// plane at both ends.
bool outside(vec3 c, vec3 e, vec3 sweep) {
	uint planes = uint(p[P_COUNTS]);
	for (uint k = 0; k < planes; k++) {
		vec4 pl = p4(P_PLANES + 4 * k);
		float dist = dot(pl.xyz, c) - pl.w;
		float r = dot(abs(pl.xyz), e);
		if (dist > r && dist + dot(pl.xyz, sweep) > r) {
			return true;
		}
	}
	return false;
}

// True if the shadow of a sphere at `centre`, carried along any shadowed directional light's
// direction of travel, can come within that light's reach of the camera.
bool casts_within(vec3 centre, float radius) {
	vec3 camera = p4(P_CAMERA).xyz;
	uint reaches = uint(p[P_COUNTS + 3]);
	for (uint k = 0; k < reaches; k++) {
		vec4 r = p4(P_REACH + 4 * k);
		vec3 to_camera = camera - centre;
		float along = max(dot(to_camera, r.xyz), 0.0);
		vec3 off = to_camera - r.xyz * along;
		if (dot(off, off) <= (r.w + radius) * (r.w + radius)) {
			return true;
		}
	}
	return false;
}

bool shadow_reaches_view(vec3 c, vec3 e) {
	uint sweeps = uint(p[P_COUNTS + 1]);
	for (uint k = 0; k < sweeps; k++) {
		if (!outside(c, e, p4(P_SWEEPS + 4 * k).xyz)) {
			return true;
		}
	}
	if (p[P_SHAPE + 3] > 0.5) {
		return true;
	}
	uint spheres = uint(p[P_COUNTS + 2]);
	for (uint k = 0; k < spheres; k++) {
		vec4 s = p4(P_SPHERES + 4 * k);
		vec3 nearest = clamp(s.xyz, c - e, c + e);
		vec3 d = nearest - s.xyz;
		if (dot(d, d) <= s.w * s.w) {
			return true;
		}
	}
	return false;
}

float lod_value(float distance, float diameter, float c) {
	vec4 lod = p4(P_LOD);
	float ratio = distance * c / diameter;
	if (ratio > 0.0 && !isinf(ratio)) {
		return log2(ratio) * lod.x + lod.y;
	}
	return isinf(ratio) ? FLT_MAX : -FLT_MAX;
}

uint pick_level(float value, uint previous, uint top) {
	uint plain = value <= 0.0 ? 0u : min(uint(min(value, 255.0)), top);
	if (previous != CLASS_CULLED) {
		uint prev = previous & CLASS_LEVEL_BITS;
		if (prev <= top) {
			float lo = float(prev) - HYSTERESIS;
			float hi = float(prev) + 1.0 + HYSTERESIS;
			if (value >= lo && (value < hi || prev == top)) {
				return prev;
			}
		}
	}
	return plain;
}

uint classify(uint i, uint previous) {
	uint top = uint(p[P_SETTINGS + 2]);
	float force = p[P_SETTINGS + 3];
	if (p[P_CAMERA + 3] < 0.5) {
		return force >= 0.0 ? min(uint(force), top) : 0u;
	}
	bool full = p[P_SHAPE + 1] > 0.5;
	uint placement = i * (full ? PLACEMENT_TEXELS_FULL : PLACEMENT_TEXELS);
	vec4 t0 = texelFetch(placements, data_coord(placement), 0);
	uint packed_yaw = floatBitsToUint(t0.w);
	int slot = full ? 0 : int(packed_yaw >> YAW_BITS) - int(RECENT_SLOT_BIAS);
	vec4 state = slot > 0
			? texelFetch(recent, ivec3(int(uint(slot) % DATA_TEXTURE_WIDTH), 0, int(uint(slot) / DATA_TEXTURE_WIDTH)), 0)
			: texelFetch(states, data_coord(i * STATE_TEXELS), 0);
	vec3 position = t0.xyz;
	vec3 cols[3];
	float size;
	if (full) {
		vec4 t2 = texelFetch(placements, data_coord(placement + 1), 0);
		vec4 t3 = texelFetch(placements, data_coord(placement + 2), 0);
		cols[0] = t2.xyz;
		cols[1] = vec3(t2.w, t3.xy);
		cols[2] = vec3(t3.zw, t0.w);
		size = max(max(length(cols[0]), length(cols[1])), length(cols[2]));
	} else {
		float scale = unpackHalf2x16(floatBitsToUint(state.z)).y;
		float yaw = float(packed_yaw & (YAW_STEPS - 1)) * (TAU / float(YAW_STEPS));
		float s = sin(yaw);
		float c = cos(yaw);
		cols[0] = vec3(c, 0.0, -s) * scale;
		cols[1] = vec3(0.0, scale, 0.0);
		cols[2] = vec3(s, 0.0, c) * scale;
		size = scale;
	}
	uint flag = 0;
	bool has_lod = p[P_LOD + 3] > 0.5;
	if (p[P_SETTINGS] > 0.5) {
		uint code = uint(state.y);
		vec3 lo;
		vec3 hi;
		clip_bounds(code % CLIP_CODE_BASE, lo, hi);
		float blend = unpackHalf2x16(floatBitsToUint(state.w)).y - BLEND_BIAS;
		if (blend > 0.0 && p[P_SHADOWS + 3] - state.x < blend) {
			vec3 lo2;
			vec3 hi2;
			clip_bounds(code / CLIP_CODE_BASE, lo2, hi2);
			lo = min(lo, lo2);
			hi = max(hi, hi2);
		}
		vec3 bc = (lo + hi) * 0.5;
		vec3 be = (hi - lo) * 0.5;
		vec3 centre = cols[0] * bc.x + cols[1] * bc.y + cols[2] * bc.z;
		vec3 half_size = abs(cols[0]) * be.x + abs(cols[1]) * be.y + abs(cols[2]) * be.z;
		if (p[P_SHADOWS + 2] > 0.5) {
			// Any turn about +Y: the box's farthest horizontal corner sweeps a circle.
			float r = length(vec3(abs(centre.x) + half_size.x, 0.0, abs(centre.z) + half_size.z));
			centre = vec3(0.0, centre.y, 0.0);
			half_size = vec3(r, half_size.y, r);
		}
		centre += position;
		if (!finite3(centre) || !finite3(half_size)) {
			return CLASS_CULLED;
		}
		bool inside = !outside(centre, half_size, vec3(0.0));
		if (inside && uint(p[P_COUNTS + 3]) > 0) {
			float radius = length(max(abs(lo), abs(hi))) * size;
			if (!casts_within(position, radius)) {
				flag = CLASS_NO_CAST;
			}
		}
		if (!inside) {
			if (!(p[P_SHADOWS + 1] > 0.5 && shadow_reaches_view(centre, half_size))) {
				return CLASS_CULLED;
			}
			flag = CLASS_SHADOW_ONLY;
		}
	}
	uint level;
	if (force >= 0.0) {
		level = min(uint(force), top);
	} else if (!has_lod) {
		level = 0;
	} else {
		float d = p[P_LOD + 2] * size;
		float value = p[P_PROJECTION] < 0.5
				? lod_value(distance(position, p4(P_CAMERA).xyz), d, p[P_PROJECTION + 1])
				: lod_value(p[P_PROJECTION + 1], d, 1.0 / REFERENCE_IMAGE_HEIGHT);
		level = pick_level(value + p[P_SETTINGS + 1], previous, top);
	}
	return level | flag;
}

uint item_index() {
	uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
	return group * GPU_GROUP_SIZE + gl_LocalInvocationID.x;
}

void run_classify() {
	uint local = gl_LocalInvocationID.x;
	for (uint k = local; k < MAX_LEVELS + 2; k += GPU_GROUP_SIZE) {
		group_counts[k] = 0;
	}
	barrier();
	uint i = item_index();
	if (i < pc.count) {
		uint c = classify(i, classes[i]);
		classes[i] = c;
		if (c != CLASS_CULLED) {
			if ((c & CLASS_SHADOW_ONLY) != 0) {
				atomicAdd(group_counts[MAX_LEVELS], 1);
			} else {
				atomicAdd(group_counts[c & CLASS_LEVEL_BITS], 1);
				if ((c & CLASS_NO_CAST) != 0) {
					atomicAdd(group_counts[MAX_LEVELS + 1], 1);
				}
			}
		}
	}
	barrier();
	for (uint k = local; k < MAX_LEVELS + 2; k += GPU_GROUP_SIZE) {
		if (group_counts[k] != 0) {
			// COUNTER_LEVELS, then COUNTER_SHADOW_ONLY and COUNTER_NO_CAST, in that order.
			atomicAdd(counters[COUNTER_LEVELS + k], group_counts[k]);
		}
	}
}

void run_fill() {
	uint local = gl_LocalInvocationID.x;
	if (local == 0) {
		group_taken = 0;
	}
	barrier();
	uint i = item_index();
	bool take = false;
	uint texel = 0;
	uint actor = 0;
	if (i < pc.count) {
		texel = list[i];
		actor = texel & 0xFFFFFFu;
		uint c = actor < uint(p[P_PROJECTION + 2]) ? classes[actor] : CLASS_CULLED;
		if (c != CLASS_CULLED) {
			uint level = min(c & CLASS_LEVEL_BITS, pc.last);
			if (pc.shadow == 0) {
				take = (c & CLASS_SHADOW_ONLY) == 0 && level == pc.level;
			} else if (p[P_SHADOWS + 1] > 0.5 && (c & CLASS_NO_CAST) == 0) {
				float shadow_lod = p[P_SHADOWS];
				uint floor_level = shadow_lod >= 0.0 ? min(uint(shadow_lod), pc.last) : 0u;
				take = max(level, floor_level) == pc.level;
			}
		}
	}
	uint k = take ? atomicAdd(group_taken, 1) : 0u;
	barrier();
	if (local == 0) {
		group_base = group_taken > 0 ? atomicAdd(counters[COUNTER_SLOTS + pc.slot], group_taken) : 0u;
	}
	barrier();
	uint at = group_base + k;
	if (take && at < pc.capacity) {
		uint v = at * (GPU_INSTANCE_FLOATS / 4);
		instances[v] = vec4(1.0, 0.0, 0.0, 0.0);
		instances[v + 1] = vec4(0.0, 1.0, 0.0, 0.0);
		instances[v + 2] = vec4(0.0, 0.0, 1.0, 0.0);
		instances[v + 3] = vec4(float(actor), float(texel >> 24), 0.0, 0.0);
	}
}

void run_commands() {
	if (gl_GlobalInvocationID.x != 0) {
		return;
	}
	uint n = min(counters[COUNTER_SLOTS + pc.slot], pc.capacity);
	for (uint s = 0; s < pc.surfaces; s++) {
		commands[s * GPU_COMMAND_WORDS + 1] = n;
	}
}

void main() {
	if (pc.mode == MODE_CLASSIFY) {
		run_classify();
	} else if (pc.mode == MODE_FILL) {
		run_fill();
	} else {
		run_commands();
	}
}
