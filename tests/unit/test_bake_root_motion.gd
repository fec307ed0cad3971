# Root motion: a walk whose hips travel forward, baked kept and in place (QuirkyCharacter: hips
# carried 1.2 m/s along +Z with sway and bob, under a scaled and rotated armature).
extends VatTest


func _bake(mode: int, bone := "") -> VertexAnimation:
	var va := VertexAnimation.new()
	va.source_scene = QuirkyCharacter.build()
	va.clips = PackedStringArray(["Walk", "Wave", "TPose"])
	va.root_motion = mode
	va.root_motion_bone = bone
	check_eq(va.bake(), OK, "the walk bakes (root_motion %d, bone '%s')" % [mode, bone])
	return va


## The centre of the body's vertices at each frame of `clip` (they all ride on the hips).
func _centres(va: VertexAnimation, clip: int) -> PackedVector3Array:
	var out := PackedVector3Array()
	for f in va.get_clip_frame_count(clip):
		var c := Vector3.ZERO
		var pts := va.decode_frame(clip, f)
		for p in pts:
			c += p
		out.append(c / pts.size())
	return out


func _horizontal(v: Vector3) -> float:
	return Vector2(v.x, v.z).length()


func _vertical_range(points: PackedVector3Array) -> float:
	var lo := INF
	var hi := -INF
	for p in points:
		lo = minf(lo, p.y)
		hi = maxf(hi, p.y)
	return hi - lo


func test_in_place_removes_the_drift_and_keeps_the_bob() -> void:
	var kept := _bake(0)
	var in_place := _bake(1)
	var walk := kept.find_clip("Walk")
	var a := _centres(kept, walk)
	var b := _centres(in_place, walk)
	var kept_travel := _horizontal(a[a.size() - 1] - a[0])
	var left := _horizontal(b[b.size() - 1] - b[0])
	print("    travel kept %.4f m, in place %.4f m (%.3f%%); vertical range kept %.4f, in place %.4f" % [
		kept_travel, left, 100.0 * left / kept_travel, _vertical_range(a), _vertical_range(b)])
	check(kept_travel > 1.0, "the kept walk travels about 1.2 m (%.3f)" % kept_travel)
	check(left < 0.01 * kept_travel, "in place, the travel drops below 1%% of the kept travel (%.4f of %.4f)" % [left, kept_travel])
	check_near(_vertical_range(b), _vertical_range(a), 0.05 * _vertical_range(a), "the vertical bob stays")
	check(_vertical_range(b) > 0.5 * QuirkyCharacter.WALK_BOB, "the bob is there at all (%.4f)" % _vertical_range(b))
	# Clips without root motion are the same either way.
	var wave := kept.find_clip("Wave")
	var farthest := 0.0
	var ours := in_place.decode_frame(wave, 4)
	var theirs := kept.decode_frame(wave, 4)
	for i in ours.size():
		farthest = maxf(farthest, ours[i].distance_to(theirs[i]))
	# Up to the half-precision step of each bake's own bounds (the in-place bake's are smaller).
	check(farthest < 1e-3, "a clip without root motion is untouched (%.6f m apart)" % farthest)
	check(in_place.get_bake_stats()["summary"].contains("removed (in place)"), "the summary says the travel was removed")


func test_root_velocity_matches_the_feet() -> void:
	for mode in [0, 1]:
		var va := _bake(mode)
		var walk := va.find_clip("Walk")
		var v := va.get_clip_root_velocity(walk)
		# Measured on the kept bake's frames: the travel between the first and the last frame.
		var kept := _bake(0) if mode == 1 else va
		var c := _centres(kept, walk)
		var n := kept.get_clip_frame_count(walk)
		var measured := (c[n - 1] - c[0]) / (kept.get_frame_time(walk, n - 1) - kept.get_frame_time(walk, 0))
		print("    mode %d: velocity %s, measured from the frames %s" % [mode, v, measured])
		check(_horizontal(v - measured) <= 0.05 * _horizontal(measured), "root velocity %s within 5%% of the hips' travel / time %s" % [v, measured])
		check_near(v.z, QuirkyCharacter.WALK_SPEED, 0.05 * QuirkyCharacter.WALK_SPEED, "forward (+Z) at the walk's speed")
		check_eq(va.get_clip_root_velocity(va.find_clip("Wave")), Vector3.ZERO, "no root velocity for a clip without root motion")
		check_eq(va.get_clip_root_velocity(va.find_clip("TPose")), Vector3.ZERO, "none for a pose")


func test_root_bone_by_name() -> void:
	var named := _bake(1, "Hips")
	var auto := _bake(1)
	check_eq(named.decode_frame(0, 10), auto.decode_frame(0, 10), "naming the bone found on its own gives the same bake")
	var va := VertexAnimation.new()
	va.source_scene = QuirkyCharacter.build()
	va.root_motion = 1
	va.root_motion_bone = "Tail"
	check_eq(va.bake(), FAILED, "a root bone the skeleton does not have is refused")
	check(not va.is_baked(), "nothing baked")


func test_pose_clip_is_one_frame() -> void:
	var va := _bake(0)
	var pose := va.find_clip("TPose")
	check_eq(va.get_clip_frame_count(pose), 1, "TPose has one frame")
	check(va.decode_frame(pose, 0) != va.decode_frame(va.find_clip("Wave"), 0), "and it is its own pose, not the rest pose of another clip")
