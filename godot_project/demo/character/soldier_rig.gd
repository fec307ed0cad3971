## The demo soldier's skeleton: bone names, parents, rest offsets, and the pose
## the mesh is authored ("bound") in.
##
## Units are metres; the character stands on y = 0 and faces -Z (Godot's forward),
## so its right hand is on +X. Every rest rotation is identity, so an animation's
## bone rotation is directly the rotation relative to the parent bone.
##
## The bind pose deliberately differs from the rest pose: the mesh is modelled with
## the arms out in an A-pose and the legs slightly apart, while the rest pose has
## the arms hanging down. The Skin's bind poses are the inverses of the bind-time
## global transforms (not of the rest), so a baker that used rest poses instead of
## the Skin's bind poses would draw A-pose arms where Godot draws hanging arms.
extends RefCounted

## Arm angle away from the body in the bind pose (degrees).
const BIND_ARM_SPREAD := 40.0
## Leg angle away from the body in the bind pose (degrees).
const BIND_LEG_SPREAD := 6.0

## [name, parent, rest offset from the parent's origin, tail in the bone's own frame].
## The tail is only used to measure distances when weighting the skin.
const BONES := [
	["Hips", "", Vector3(0, 1.0, 0), Vector3(0, 0.1, 0)],
	["Spine", "Hips", Vector3(0, 0.1, 0), Vector3(0, 0.18, 0)],
	["Chest", "Spine", Vector3(0, 0.18, 0), Vector3(0, 0.24, 0)],
	["Neck", "Chest", Vector3(0, 0.24, 0), Vector3(0, 0.08, 0)],
	["Head", "Neck", Vector3(0, 0.08, 0), Vector3(0, 0.2, 0)],
	["Shoulder_L", "Chest", Vector3(-0.05, 0.18, 0), Vector3(-0.14, 0, 0)],
	["UpperArm_L", "Shoulder_L", Vector3(-0.14, 0, 0), Vector3(0, -0.28, 0)],
	["ForeArm_L", "UpperArm_L", Vector3(0, -0.28, 0), Vector3(0, -0.25, 0)],
	["Hand_L", "ForeArm_L", Vector3(0, -0.25, 0), Vector3(0, -0.1, 0)],
	["Shoulder_R", "Chest", Vector3(0.05, 0.18, 0), Vector3(0.14, 0, 0)],
	["UpperArm_R", "Shoulder_R", Vector3(0.14, 0, 0), Vector3(0, -0.28, 0)],
	["ForeArm_R", "UpperArm_R", Vector3(0, -0.28, 0), Vector3(0, -0.25, 0)],
	["Hand_R", "ForeArm_R", Vector3(0, -0.25, 0), Vector3(0, -0.1, 0)],
	["Thigh_L", "Hips", Vector3(-0.1, -0.05, 0), Vector3(0, -0.44, 0)],
	["Shin_L", "Thigh_L", Vector3(0, -0.44, 0), Vector3(0, -0.43, 0)],
	["Foot_L", "Shin_L", Vector3(0, -0.43, 0), Vector3(0, -0.06, -0.15)],
	["Thigh_R", "Hips", Vector3(0.1, -0.05, 0), Vector3(0, -0.44, 0)],
	["Shin_R", "Thigh_R", Vector3(0, -0.44, 0), Vector3(0, -0.43, 0)],
	["Foot_R", "Shin_R", Vector3(0, -0.43, 0), Vector3(0, -0.06, -0.15)],
]

## Thigh and shin lengths, used by the leg IK of the clips.
const THIGH_LENGTH := 0.44
const SHIN_LENGTH := 0.43
## Height of the ankle joint above the sole.
const ANKLE_HEIGHT := 0.08


static func bone_count() -> int:
	return BONES.size()


static func bone_index(bone_name: String) -> int:
	for i in BONES.size():
		if BONES[i][0] == bone_name:
			return i
	return -1


static func bone_name(index: int) -> String:
	return BONES[index][0]


static func bone_names() -> PackedStringArray:
	var out := PackedStringArray()
	for b in BONES:
		out.append(b[0])
	return out


static func parent_index(index: int) -> int:
	return bone_index(BONES[index][1])


static func rest_local(index: int) -> Transform3D:
	return Transform3D(Basis.IDENTITY, BONES[index][2])


## Local rotation of a bone in the pose the mesh is modelled in.
static func bind_local_rotation(index: int) -> Basis:
	var n: String = BONES[index][0]
	var deg := Vector3.ZERO
	match n:
		"UpperArm_L":
			deg = Vector3(0, 0, -BIND_ARM_SPREAD)
		"UpperArm_R":
			deg = Vector3(0, 0, BIND_ARM_SPREAD)
		"Thigh_L":
			deg = Vector3(0, 0, -BIND_LEG_SPREAD)
		"Thigh_R":
			deg = Vector3(0, 0, BIND_LEG_SPREAD)
	return Basis.from_euler(deg * (PI / 180.0))


## Skeleton-space transform of every bone in the pose the mesh is modelled in.
## The Skin's bind pose of bone i is bind_globals()[i].affine_inverse().
static func bind_globals() -> Array[Transform3D]:
	var out: Array[Transform3D] = []
	for i in BONES.size():
		var local := Transform3D(bind_local_rotation(i), BONES[i][2])
		var p := parent_index(i)
		out.append(local if p < 0 else out[p] * local)
	return out


## Skeleton-space transform of every bone in the rest pose.
static func rest_globals() -> Array[Transform3D]:
	var out: Array[Transform3D] = []
	for i in BONES.size():
		var p := parent_index(i)
		out.append(rest_local(i) if p < 0 else out[p] * rest_local(i))
	return out


## [head, tail] of every bone in bind space, for distance-based skin weights.
static func bind_segments() -> Array:
	var g := bind_globals()
	var out := []
	for i in BONES.size():
		out.append([g[i].origin, g[i] * (BONES[i][3] as Vector3)])
	return out


## Creates the Skeleton3D with every bone at its rest pose.
static func make_skeleton() -> Skeleton3D:
	var sk := Skeleton3D.new()
	sk.name = "Skeleton"
	for i in BONES.size():
		sk.add_bone(BONES[i][0])
	for i in BONES.size():
		sk.set_bone_parent(i, parent_index(i))
		sk.set_bone_rest(i, rest_local(i))
	sk.reset_bone_poses()
	return sk
