# Bakes in steps (VertexAnimation.start_bake, VertexAnimationBaker.start_bake), as the editor's Bake
# panel runs them one step per frame: progress in order, the same result as bake(), nothing
# changed by a cancelled or failed job, and the baked state as one value (undo's snapshot).
extends VatTest

const SOLDIER := "res://generated/soldier.tscn"


func _body() -> VertexAnimation:
	var va := VertexAnimation.new()
	va.source_scene = load(SOLDIER)
	va.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	va.lod_enabled = false
	return va


## Steps `job` one per frame to its end; returns the steps it took.
func _run(job: VertexAnimationBakeJob) -> int:
	var steps := 1
	while job.step():
		steps += 1
		await frames(1)
	return steps


func test_stepped_bake_matches_bake() -> void:
	var va := _body()
	var progress := []
	va.bake_progress.connect(func(done: int, total: int) -> void: progress.append([done, total]))
	var job := va.start_bake()
	check(not job.is_finished(), "a new job has not finished")
	check_eq(job.get_error(), ERR_BUSY, "a running job says busy")
	check(job.step(), "the first step prepares and asks for more")
	var total := job.get_total()
	var clips := scene_clips(load(SOLDIER)).size()
	check_eq(total, 1 + clips + 1, "steps: prepare, one per clip, build")
	var baked_midway := false
	while job.step():
		baked_midway = baked_midway or va.is_baked()
		await frames(1)
	check(not baked_midway, "the resource stays unbaked until the last step")
	check_eq(job.get_error(), OK, "the job finished: " + job.get_message())
	check_eq(job.get_done(), total, "done ends at total")
	check(job.get_message().begins_with("baked '"), "the summary is the message")
	check(va.is_baked(), "the job baked the resource")
	var expected := []
	for i in clips:
		expected.append([i + 1, clips])
	check_eq(progress, expected, "bake_progress once per clip, in order, ending at the total")
	check(not job.step(), "a finished job does nothing more")
	var reference := soldier_body()
	check_eq(va.vertex_count, reference.vertex_count, "vertex count as bake()")
	check_eq(va.get_clip_names(), reference.get_clip_names(), "clips as bake()")
	for c in va.get_clip_count():
		var last := va.get_clip_frame_count(c) - 1
		check_eq(va.decode_frame(c, last), reference.decode_frame(c, last), "clip %d's last frame as bake()" % c)


func test_cancel_changes_nothing() -> void:
	var va := _body()
	va.clips = PackedStringArray(["walk"])
	check_eq(va.bake(), OK, "a first bake")
	var before := va.get_baked_state()
	var children := tree.root.get_child_count()
	va.clips = PackedStringArray()
	va.fps = 12.0
	var job := va.start_bake()
	job.step()
	job.step()
	check_eq(tree.root.get_child_count(), children + 1, "the job holds the character in the tree")
	job.cancel()
	check(job.is_finished(), "a cancelled job has finished")
	check_eq(job.get_error(), ERR_SKIP, "a cancelled job says ERR_SKIP")
	check(not job.step(), "a cancelled job takes no more steps")
	check_eq(tree.root.get_child_count(), children, "cancel freed the character")
	check_eq(va.get_baked_state(), before, "every baked field is as before")
	check_eq(va.get_clip_names(), PackedStringArray(["walk"]), "the first bake's clips")


func test_failed_job_changes_nothing() -> void:
	var va := _body()
	check_eq(va.bake(), OK, "a first bake")
	var before := va.get_baked_state()
	va.root_motion_bone = &"NoSuchBone"
	var job := va.start_bake()
	await _run(job)
	check_eq(job.get_error(), FAILED, "a bad setting fails the job")
	check("NoSuchBone" in job.get_message(), "the error names the setting: " + job.get_message())
	check_eq(va.get_baked_state(), before, "the previous bake is kept")


func test_baked_state_round_trip() -> void:
	var a := soldier_body()
	var state := a.get_baked_state()
	for key in ["mesh", "lod_meshes", "position_texture", "normal_texture", "clip_texture",
			"vertex_count", "frame_count", "clip_names", "clip_table", "stats"]:
		check(state.has(key), "the state has %s" % key)
	var b := VertexAnimation.new()
	var changed := [0]
	b.changed.connect(func() -> void: changed[0] += 1)
	b.set_baked_state(state)
	check(b.is_baked(), "a copied state is a bake")
	check_eq(changed[0], 1, "set_baked_state emits changed once")
	check_eq(b.decode_frame(1, 2), a.decode_frame(1, 2), "it decodes as the original")
	b.set_baked_state({"mesh": null})
	check(b.is_baked(), "an incomplete state changes nothing")
	var lod := VertexAnimation.new()
	lod.source_scene = load(SOLDIER)
	lod.clips = PackedStringArray(["walk", "idle"])
	check_eq(lod.bake(), OK, "a bake with LOD levels")
	b.set_baked_state(lod.get_baked_state())
	check(b.get_lod_count() > 1, "the state carries the LOD meshes (%d levels)" % b.get_lod_count())
	check_eq(b.get_lod_count(), lod.get_lod_count(), "all of them")
	check_eq(b.get_lod_mesh(1), lod.get_lod_mesh(1), "the same LOD1 mesh")
	var unbaked := VertexAnimation.new().get_baked_state()
	b.set_baked_state(unbaked)
	check(not b.is_baked(), "an unbaked state unbakes")
	check_eq(b.get_baked_state(), unbaked, "and reads back the same")


func test_baker_job() -> void:
	var baker := VertexAnimationBaker.new()
	baker.add_child((load(SOLDIER) as PackedScene).instantiate())
	root.add_child(baker)
	var body := VertexAnimation.new()
	body.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	body.lod_enabled = false
	var shield := VertexAnimation.new()
	shield.meshes = [NodePath("Skeleton/Shield")] as Array[NodePath]
	shield.lod_enabled = false
	baker.targets = [body, shield] as Array[VertexAnimation]
	var progress := []
	var finished := []
	baker.bake_progress.connect(func(done: int, total: int) -> void: progress.append([done, total]))
	baker.bake_finished.connect(func(error: int, _s: String) -> void: finished.append(error))
	var cancelled := baker.start_bake()
	cancelled.step()
	cancelled.step()
	cancelled.cancel()
	check(not body.is_baked() and not shield.is_baked(), "a cancelled baker job bakes nothing")
	check_eq(finished, [ERR_SKIP], "bake_finished says cancelled")
	check_eq(progress, [], "no target was reported baked")
	finished.clear()
	var job := baker.start_bake()
	check_eq(job.get_resources().size(), 2, "the job bakes both targets")
	await _run(job)
	check_eq(job.get_error(), OK, "the baker job finished: " + job.get_message())
	check(body.is_baked() and shield.is_baked(), "both targets baked")
	check_eq(progress, [[1, 2], [2, 2]], "bake_progress per target")
	check_eq(finished, [OK], "bake_finished once")
	check(body.vertex_count > shield.vertex_count, "each target bakes its own meshes")
