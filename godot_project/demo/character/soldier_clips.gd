## The soldier's clips, keyed procedurally: idle, walk, run (loops), attack and
## die (one-shots).
##
## Every clip keys the rotation of every bone and the position of Hips, with
## linear interpolation, a key at t = 0 and one at the clip's end (for loops the
## end key equals the start key), so each clip fully defines the pose whatever
## played before it. Rest rotations are identity, so a key is directly the bone's
## rotation relative to its parent. Angles below are Euler degrees (Godot's YXZ
## order): +X swings a hanging limb forwards, and tips the torso backwards.
extends RefCounted

const Rig := preload("res://demo/character/soldier_rig.gd")

## Spacing of the keys of the one-shot clips (their poses are eased between
## hand-placed key poses).
const ONE_SHOT_STEP := 1.0 / 30.0

## Gait of the looped clips: half the stride (metres), foot lift, the fraction
## of the cycle a foot is planted, and the cycle length (seconds).
const WALK_GAIT := {"half_stride": 0.22, "lift": 0.08, "stance": 0.6, "length": 1.0}
const RUN_GAIT := {"half_stride": 0.3, "lift": 0.2, "stance": 0.38, "length": 0.66}

const POS := "pos"
const ROT := "rot"
const IK := "ik"


static func build_library() -> AnimationLibrary:
	var lib := AnimationLibrary.new()
	lib.add_animation("idle", _looped(2.0, 40, _idle))
	lib.add_animation("walk", _looped(WALK_GAIT["length"], 24, _walk))
	lib.add_animation("run", _looped(RUN_GAIT["length"], 20, _run))
	lib.add_animation("attack", _one_shot(0.8, _attack_keys()))
	lib.add_animation("die", _one_shot(1.5, _die_keys()))
	return lib


# --- Clips ---

static func _idle(p: float) -> Dictionary:
	var w := TAU * p
	return {
		POS: Vector3(0.006 * sin(w), 0.985 + 0.003 * cos(2.0 * w), 0.0),
		ROT: {
			"Hips": Vector3(0, 2.0 * sin(w), 1.0 * sin(w)),
			"Spine": Vector3(-2.0 + 0.8 * sin(w), 0, -1.0 * sin(w)),
			"Chest": Vector3(1.5 * sin(2.0 * w), 0, 0),
			"Head": Vector3(2.0 * sin(w), 5.0 * sin(w + 1.0), 0),
			"Shoulder_L": Vector3(0, 0, -1.0 * sin(2.0 * w)),
			"Shoulder_R": Vector3(0, 0, 1.0 * sin(2.0 * w)),
			"UpperArm_L": Vector3(8.0 + 2.0 * sin(w), 0, -12.0),
			"ForeArm_L": Vector3(25.0, 0, 0),
			"UpperArm_R": Vector3(12.0 + 2.0 * sin(w), 0, 10.0),
			"ForeArm_R": Vector3(35.0 + 3.0 * sin(w), 0, 0),
			"Thigh_L": Vector3(0, 0, -3.0),
			"Thigh_R": Vector3(0, 0, 3.0),
		},
		IK: {"L": Vector2(-0.06, Rig.ANKLE_HEIGHT), "R": Vector2(0.05, Rig.ANKLE_HEIGHT)},
	}


static func _walk(p: float) -> Dictionary:
	var c := cos(TAU * p)
	return {
		POS: Vector3(0, 0.945 + 0.012 * cos(2.0 * TAU * (p - 0.3)), 0),
		ROT: {
			"Hips": Vector3(0, -4.0 * c, 0),
			"Spine": Vector3(-3.0, 0, 0),
			"Chest": Vector3(0, 6.0 * c, 0),
			"Head": Vector3(0, -2.0 * c, 0),
			"UpperArm_L": Vector3(8.0 - 12.0 * c, 0, -12.0),
			"ForeArm_L": Vector3(25.0, 0, 0),
			"UpperArm_R": Vector3(12.0 + 18.0 * c, 0, 10.0),
			"ForeArm_R": Vector3(35.0 + 8.0 * c, 0, 0),
		},
		IK: {"L": _step(p, WALK_GAIT), "R": _step(p + 0.5, WALK_GAIT)},
	}


static func _run(p: float) -> Dictionary:
	var c := cos(TAU * p)
	return {
		POS: Vector3(0, 0.9 - 0.03 * cos(2.0 * TAU * (p - 0.19)), 0),
		ROT: {
			"Hips": Vector3(-6.0, -7.0 * c, 0),
			"Spine": Vector3(-10.0, 0, 0),
			"Chest": Vector3(-4.0, 9.0 * c, 0),
			"Head": Vector3(10.0, -3.0 * c, 0),
			"UpperArm_L": Vector3(5.0 - 25.0 * c, 0, -15.0),
			"ForeArm_L": Vector3(70.0, 0, 0),
			"UpperArm_R": Vector3(10.0 + 35.0 * c, 0, 12.0),
			"ForeArm_R": Vector3(75.0, 0, 0),
		},
		IK: {"L": _step(p, RUN_GAIT), "R": _step(p + 0.5, RUN_GAIT)},
	}


static func _attack_keys() -> Array:
	var idle := _idle(0.0)
	var guard := {"UpperArm_L": Vector3(55.0, 0, -20.0), "ForeArm_L": _guard_forearm(Vector3(55.0, 0, -20.0))}
	var feet := {"L": Vector2(-0.12, Rig.ANKLE_HEIGHT), "R": Vector2(0.12, Rig.ANKLE_HEIGHT)}
	var wind_up := _with(idle, Vector3(0, 0.97, 0.01), {
		"Hips": Vector3(0, -8.0, 0), "Spine": Vector3(-2.0, -10.0, 0), "Chest": Vector3(4.0, -22.0, 0),
		"Head": Vector3(0, 30.0, 0),
		"UpperArm_R": Vector3(160.0, 0, 14.0), "ForeArm_R": Vector3(75.0, 0, 0), "Hand_R": Vector3(25.0, 0, 0),
	}, guard, feet)
	var strike := _with(idle, Vector3(0, 0.93, -0.04), {
		"Hips": Vector3(0, 8.0, 0), "Spine": Vector3(-12.0, 8.0, 0), "Chest": Vector3(-6.0, 18.0, 0),
		"Head": Vector3(5.0, -22.0, 0),
		"UpperArm_R": Vector3(45.0, 0, 5.0), "ForeArm_R": Vector3(5.0, 0, 0), "Hand_R": Vector3(-30.0, 0, 0),
	}, guard, feet)
	var follow := _with(strike, Vector3(0, 0.94, -0.03), {
		"Chest": Vector3(-4.0, 24.0, 0), "Head": Vector3(4.0, -26.0, 0),
		"UpperArm_R": Vector3(25.0, 0, 0), "ForeArm_R": Vector3(15.0, 0, 0), "Hand_R": Vector3(-35.0, 0, 0),
	}, guard, feet)
	return [[0.0, idle], [0.22, wind_up], [0.42, strike], [0.56, follow], [0.8, idle]]


static func _die_keys() -> Array:
	var idle := _idle(0.0)
	var hit := _with(idle, Vector3(0, 0.975, 0.04), {
		"Hips": Vector3(6.0, 0, 0), "Spine": Vector3(8.0, 0, 0), "Chest": Vector3(12.0, 0, 0),
		"Head": Vector3(25.0, 0, 0),
		"UpperArm_L": Vector3(30.0, 0, -35.0), "ForeArm_L": Vector3(40.0, 0, 0),
		"UpperArm_R": Vector3(40.0, 0, 35.0), "ForeArm_R": Vector3(40.0, 0, 0),
	}, {}, {"L": Vector2(-0.03, Rig.ANKLE_HEIGHT), "R": Vector2(0.06, Rig.ANKLE_HEIGHT)})
	var buckle := _with(hit, Vector3(0, 0.62, 0.22), {
		"Hips": Vector3(30.0, 0, 0), "Spine": Vector3(10.0, 0, 0), "Chest": Vector3(10.0, 0, 0),
		"Head": Vector3(15.0, 0, 0),
		"UpperArm_L": Vector3(70.0, 0, -45.0), "ForeArm_L": Vector3(30.0, 0, 0),
		"UpperArm_R": Vector3(80.0, 0, 45.0), "ForeArm_R": Vector3(30.0, 0, 0),
	}, {}, {"L": Vector2(-0.02, Rig.ANKLE_HEIGHT), "R": Vector2(0.02, Rig.ANKLE_HEIGHT)})
	var impact := _lying(Vector3(0, 0.2, 0.65), 82.0, 45.0, -60.0, Vector3(120.0, 0, 60.0), 35.0, Vector3(-15.0, 0, 0))
	var settle := _lying(Vector3(0, 0.16, 0.72), 92.0, 20.0, -25.0, Vector3(60.0, 0, 75.0), 20.0, Vector3(-10.0, 15.0, 0))
	var rest := _lying(Vector3(0, 0.135, 0.74), 90.0, -2.0, -6.0, Vector3(20.0, 0, 70.0), 15.0, Vector3(-5.0, 25.0, 0))
	return [[0.0, idle], [0.2, hit], [0.55, buckle], [0.95, impact], [1.15, settle], [1.5, rest]]


## A pose on the ground, legs and arms given directly (no IK).
static func _lying(pos: Vector3, hips_pitch: float, thigh: float, shin: float, upper_arm: Vector3,
		fore_arm: float, head: Vector3) -> Dictionary:
	var rot := {
		"Hips": Vector3(hips_pitch, 0, 0), "Head": head,
		"UpperArm_L": Vector3(upper_arm.x, -upper_arm.y, -upper_arm.z), "ForeArm_L": Vector3(fore_arm, 0, 0),
		"UpperArm_R": upper_arm, "ForeArm_R": Vector3(fore_arm, 0, 0),
		# Lays the sword along the arm instead of pointing it at the sky.
		"Hand_R": Vector3(-35.0, 0, 0),
	}
	for s in [["L", -1.0], ["R", 1.0]]:
		rot["Thigh_" + s[0]] = Vector3(thigh, 0, 6.0 * s[1])
		rot["Shin_" + s[0]] = Vector3(shin, 0, 0)
		rot["Foot_" + s[0]] = Vector3(-20.0, 0, 0)
	return {POS: pos, ROT: rot, IK: {}}


# --- Building blocks ---

## Speed (m/s) at which a character playing a looped gait must move forwards
## so that its planted feet do not slide: walk ~0.73, run ~2.39.
static func ground_speed(gait: Dictionary) -> float:
	return 2.0 * gait["half_stride"] / (gait["stance"] * gait["length"])


## Ankle target (z, y) of a foot at phase q: planted and sliding back for the
## stance fraction of the cycle, then lifted forwards.
static func _step(q: float, gait: Dictionary) -> Vector2:
	var half_stride: float = gait["half_stride"]
	var lift: float = gait["lift"]
	var stance: float = gait["stance"]
	q = fposmod(q, 1.0)
	if q < stance:
		return Vector2(-half_stride + 2.0 * half_stride * q / stance, Rig.ANKLE_HEIGHT)
	var r := (q - stance) / (1.0 - stance)
	var z := half_stride - 2.0 * half_stride * (0.5 - 0.5 * cos(PI * r))
	return Vector2(z, Rig.ANKLE_HEIGHT + lift * sin(PI * pow(r, 0.8)))


## ForeArm_L rotation (Euler degrees) that holds the shield in front of the chest:
## forearm across the body towards +X, shield face (-X of the forearm) forwards.
static func _guard_forearm(upper_arm_deg: Vector3) -> Vector3:
	var target := Basis(Vector3(0, 0, 1), Vector3(-1, 0, 0), Vector3(0, -1, 0))
	var upper := Basis.from_euler(upper_arm_deg * (PI / 180.0))
	return (upper.inverse() * target).get_euler() * (180.0 / PI)


## A copy of base with a new hips position, some bone rotations replaced, and
## new foot targets (an empty feet dictionary keeps base's).
static func _with(base: Dictionary, pos: Vector3, rot: Dictionary, more_rot: Dictionary,
		feet: Dictionary) -> Dictionary:
	var out := {POS: pos, ROT: (base[ROT] as Dictionary).duplicate(), IK: (base[IK] as Dictionary).duplicate()}
	out[ROT].merge(rot, true)
	out[ROT].merge(more_rot, true)
	if not feet.is_empty():
		out[IK] = feet.duplicate()
	return out


## Euler degrees of every bone, with the legs that have a foot target solved.
static func _resolve(pose: Dictionary) -> Dictionary:
	var rot := {}
	for i in Rig.bone_count():
		var n := Rig.bone_name(i)
		rot[n] = pose[ROT].get(n, Vector3.ZERO)
	var hips := Basis.from_euler((rot["Hips"] as Vector3) * (PI / 180.0))
	for side in pose[IK]:
		var leg := _solve_leg(pose[POS], hips, side, pose[IK][side])
		for k in leg:
			rot[k + "_" + side] = leg[k] + (rot[k + "_" + side] as Vector3)
	return rot


## Two-bone IK in the hips' sagittal plane; the foot is kept level.
static func _solve_leg(hips_pos: Vector3, hips: Basis, side: String, target: Vector2) -> Dictionary:
	var thigh_offset: Vector3 = Rig.BONES[Rig.bone_index("Thigh_" + side)][2]
	var joint := hips_pos + hips * thigh_offset
	var d := hips.inverse() * (Vector3(joint.x, target.y, target.x) - joint)
	var a := Rig.THIGH_LENGTH
	var b := Rig.SHIN_LENGTH
	var dist := clampf(Vector2(d.y, d.z).length(), 0.1, (a + b) * 0.9995)
	var direction := atan2(-d.z, -d.y)
	var alpha := acos(clampf((a * a + dist * dist - b * b) / (2.0 * a * dist), -1.0, 1.0))
	var beta := acos(clampf((b * b + dist * dist - a * a) / (2.0 * b * dist), -1.0, 1.0))
	var thigh := rad_to_deg(direction + alpha)
	var shin := -rad_to_deg(alpha + beta)
	var hips_pitch := rad_to_deg(hips.get_euler().x)
	return {"Thigh": Vector3(thigh, 0, 0), "Shin": Vector3(shin, 0, 0),
		"Foot": Vector3(-(hips_pitch + thigh + shin), 0, 0)}


static func _looped(length: float, keys: int, pose_fn: Callable) -> Animation:
	var samples := []
	for i in keys:
		var pose: Dictionary = pose_fn.call(float(i) / keys)
		samples.append([length * i / keys, pose[POS], _resolve(pose)])
	# The end key repeats the start key exactly, so the loop has no seam.
	samples.append([length, samples[0][1], samples[0][2]])
	return _animation(length, true, samples)


static func _one_shot(length: float, key_poses: Array) -> Animation:
	var n := int(ceil(length / ONE_SHOT_STEP - 1e-6))
	var samples := []
	for i in n + 1:
		var t := length * i / n
		var k := 0
		while k < key_poses.size() - 2 and t > key_poses[k + 1][0]:
			k += 1
		var a: Dictionary = key_poses[k][1]
		var b: Dictionary = key_poses[k + 1][1]
		var f := smoothstep(0.0, 1.0, (t - key_poses[k][0]) / (key_poses[k + 1][0] - key_poses[k][0]))
		samples.append(_blend(a, b, f, t))
	return _animation(length, false, samples)


## Eases from pose a to pose b; legs with a foot target in both are re-solved,
## so planted feet stay planted.
static func _blend(a: Dictionary, b: Dictionary, f: float, t: float) -> Array:
	var pos: Vector3 = (a[POS] as Vector3).lerp(b[POS], f)
	var ra := _resolve(a)
	var rb := _resolve(b)
	var rot := {}
	for n in ra:
		rot[n] = (ra[n] as Vector3).lerp(rb[n], f)
	var both := {}
	for side in a[IK]:
		if b[IK].has(side):
			both[side] = (a[IK][side] as Vector2).lerp(b[IK][side], f)
	if not both.is_empty():
		var mid := {POS: pos, ROT: rot.duplicate(), IK: both}
		for side in both:
			for k in ["Thigh", "Shin", "Foot"]:
				# Keep only the pose's own offsets; _resolve adds the IK angles.
				mid[ROT][k + "_" + side] = (a[ROT].get(k + "_" + side, Vector3.ZERO) as Vector3).lerp(
					b[ROT].get(k + "_" + side, Vector3.ZERO), f)
		rot = _resolve(mid)
	return [t, pos, rot]


static func _animation(length: float, loop: bool, samples: Array) -> Animation:
	var anim := Animation.new()
	anim.length = length
	anim.loop_mode = Animation.LOOP_LINEAR if loop else Animation.LOOP_NONE
	var pos_track := anim.add_track(Animation.TYPE_POSITION_3D)
	anim.track_set_path(pos_track, "Skeleton:Hips")
	anim.track_set_interpolation_type(pos_track, Animation.INTERPOLATION_LINEAR)
	for s in samples:
		anim.position_track_insert_key(pos_track, s[0], s[1])
	for i in Rig.bone_count():
		var n := Rig.bone_name(i)
		var track := anim.add_track(Animation.TYPE_ROTATION_3D)
		anim.track_set_path(track, "Skeleton:" + n)
		anim.track_set_interpolation_type(track, Animation.INTERPOLATION_LINEAR)
		var prev := Quaternion.IDENTITY
		var first := Quaternion.IDENTITY
		for k in samples.size():
			var s: Array = samples[k]
			var q := Quaternion.from_euler((s[2][n] as Vector3) * (PI / 180.0))
			# Keep neighbouring keys in one hemisphere so interpolation is short.
			if q.dot(prev) < 0.0:
				q = -q
			if k == 0:
				first = q
			elif loop and k == samples.size() - 1:
				q = first
			anim.rotation_track_insert_key(track, s[0], q)
			prev = q
	return anim
