## Update benchmark (issue 4, "Speed"): CPU cost per frame of pushing N actors whose transforms and animation
## states all change every frame, through
##   per_instance_rs  RenderingServer.multimesh_instance_set_transform + _set_custom_data per instance (GDScript),
##   set_buffer       one RenderingServer.multimesh_set_buffer with a prepacked array (16 floats per instance),
##   vat_bulk         AnimatedActorMeshInstance.set_actors + set_model_actors x3 + submit (body, sword, shield),
##   vat_bulk_body    the same with the body only: the one mesh the baselines draw, so the like-for-like ratio,
##   vat_bulk_new_ids vat_bulk with model lists that also change every frame (equipment reshuffled each
##                    frame; vat_bulk's lists stay the same, as equipment does, and are not re-uploaded),
##   vat_bulk_full    full_transform on: set_actor_transforms (12 floats per actor) + set_model_actors x3 + submit,
##   vat_immediate    begin, add_actor + 3 add_model per actor from GDScript, submit,
##   memcpy           VatCrowdBench.memcpy_usec of the bytes vat_crowd uploads (actors*32 + model instances*4),
##   texture_update   ImageTexture.update() of those same bytes, prepacked (actor texture + 3 index textures):
##                    what Godot's own upload costs, the floor for any path through data textures,
## plus Godot's measured render CPU time for each. A benchmark, never a timed test.
##
## Run under the real renderer (--headless turns MultiMesh calls into no-ops):
##   godot --path tests --rendering-driver vulkan -s res://bench/bench_update.gd -- [--quick] --out /abs/update.json
##
## A full run measures the fast paths in 3 interleaved rounds of 10 frames each (medians over all 30), so
## a slow spell of a shared machine hits every path alike; the per-call paths run once.
##
## Inputs are two precomputed sets that alternate frame by frame, so GDScript math is not measured (except the
## GDScript calls of per_instance_rs and vat_immediate, which are the point). The crowd sits behind the camera:
## on lavapipe the "GPU" is the same two CPU cores, and rasterising N soldiers would swamp the figures. The uploads
## happen whether or not the crowd is culled.
extends SceneTree

const Util := preload("res://bench/bench_util.gd")
const DEFAULT_SCENE := "res://generated/soldier.tscn"  ## override with --scene res://...
const FPS := 30.0
const WARMUP_FRAMES := 3
const SPACING := 1.5
## Per actor: 32 bytes of actor texels; per model instance: 4 bytes of index texel (issue 4).
const ACTOR_BYTES := 32
const MODEL_INSTANCE_BYTES := 4
const MODELS_PER_ACTOR := 3
## Paths that cost seconds per frame at a million actors are measured over fewer frames there.
const SLOW_PATHS := ["per_instance_rs", "vat_immediate"]
const SLOW_FRAMES_AT_1M := 5
## Interleaved rounds of the fast paths in a full run (frames split between them).
const ROUNDS := 3

var _opts: Dictionary
var _scene_path := DEFAULT_SCENE
var _vp: RID
var _scenario: RID
var _mesh: Mesh
var _vat: RefCounted = null  ## bench_update_vat.gd, when the extension is there
var _results: Array = []
var _notes: Array = []

# Inputs of the current actor count: two sets, each {positions, yaws, clips, starts, custom, buffer, xforms}.
var _sets: Array = []
var _ids := PackedInt32Array()
var _ids_shifted := PackedInt32Array()  ## every id moved to the next actor, for vat_bulk_new_ids
# The texture_update path's images and textures: actors, then one index texture per model.
var _upload_images: Array[Image] = []
var _upload_textures: Array[ImageTexture] = []
var _aabb := AABB()
# The baseline MultiMesh of the current path.
var _mm := RID()
var _instance := RID()


func _initialize() -> void:
	_run.call_deferred()


func _run() -> void:
	_opts = Util.parse_args()
	if not _opts.scene.is_empty():
		_scene_path = _opts.scene
	DisplayServer.window_set_vsync_mode(DisplayServer.VSYNC_DISABLED)
	print("bench_update: %s, renderer %s, %s" % [
		Engine.get_version_info().string, RenderingServer.get_current_rendering_method(),
		RenderingServer.get_video_adapter_name()])
	if DisplayServer.get_name() == "headless":
		printerr("bench_update: needs the real renderer (--headless makes MultiMesh calls no-ops)")
		quit(2)
		return
	var packed := load(_scene_path) as PackedScene
	if packed == null:
		printerr("bench_update: cannot load %s (generate the soldier first: cargo xtask build)" % _scene_path)
		quit(1)
		return
	if not _setup_scene(packed):
		quit(1)
		return
	var clip_count := 5
	if ClassDB.class_exists("AnimatedActorMeshInstance") and ClassDB.class_exists("VertexAnimation"):
		_vat = load("res://bench/bench_update_vat.gd").new()
		if _vat.bake_models(packed, FPS) != OK:
			quit(1)
			return
		clip_count = _vat.clip_count()
	else:
		printerr("bench_update: AnimatedActorMeshInstance is not registered (extension not built?); baselines only")
		_notes.append("vat_crowd classes missing: vat_bulk, vat_immediate not measured")
	var has_memcpy := ClassDB.class_exists("VatCrowdBench")
	if not has_memcpy:
		printerr("bench_update: VatCrowdBench is not registered; memcpy not measured")

	await _warm_up(clip_count)
	var counts: Array = [10000, 100000] if _opts.quick else [10000, 100000, 1000000]
	var frames: int = 10 if _opts.quick else 30
	# The fast paths run in interleaved rounds, so a slow spell of a shared machine hits them alike.
	var rounds: int = 1 if _opts.quick else ROUNDS
	var fast := [
		["set_buffer", _setup_multimesh, _push_set_buffer, _free_multimesh],
		["texture_update", _setup_upload, _push_upload, _free_upload],
	]
	if _vat != null:
		fast.append_array([
			["vat_bulk", _setup_vat, _push_vat_bulk, _free_vat],
			["vat_bulk_body", _setup_vat_body, _push_vat_bulk, _free_vat],
			["vat_bulk_new_ids", _setup_vat, _push_vat_bulk_new_ids, _free_vat],
			["vat_bulk_full", _setup_vat_full, _push_vat_bulk_full, _free_vat],
		])
	for n in counts:
		print("bench_update: %d actors: preparing inputs" % n)
		_make_inputs(n, clip_count)
		if has_memcpy:
			_measure_memcpy(n, frames)
		var samples := {}
		for r in rounds:
			for path: Array in fast:
				var got: Dictionary = await _sample(n, frames / rounds, path[1], path[2], path[3], path[0].begins_with("vat"))
				if not samples.has(path[0]):
					samples[path[0]] = got
				else:
					for key: String in got:
						samples[path[0]][key].append_array(got[key])
		for path: Array in fast:
			_record(path[0], n, samples[path[0]])
		_make_xforms()
		var slow_frames := SLOW_FRAMES_AT_1M if n >= 1000000 else frames
		if slow_frames < frames:
			_notes.append("%s at %d actors: %d frames measured (seconds per frame)" % [
				", ".join(SLOW_PATHS), n, slow_frames])
		await _measure("per_instance_rs", n, slow_frames, _setup_multimesh, _push_per_instance, _free_multimesh)
		if _vat != null:
			await _measure("vat_immediate", n, slow_frames, _setup_vat, _push_vat_immediate, _free_vat)
		_sets.clear()
		_print_ratios(n)

	_print_table()
	var report := {
		"results": _results,
		"character": _scene_path,
		"models_per_actor": MODELS_PER_ACTOR,
		"warmup_frames": WARMUP_FRAMES,
		"godot": Engine.get_version_info().string,
		"adapter": RenderingServer.get_video_adapter_name(),
		"notes": _notes + [
			"cpu_ms: median CPU time of the push per frame (GDScript + engine calls, incl. vat_crowd's submit);"
			+ " render_cpu_ms: median of viewport_get_measured_render_time_cpu + get_frame_setup_time_cpu.",
			"baseline MultiMeshes carry custom data (16 floats per instance) and a custom_aabb, as vat_crowd does.",
			"the crowd is placed behind the camera so lavapipe does not rasterise it; uploads happen regardless.",
		],
	}
	var err := Util.write_json(_opts.out, report)
	quit(0 if err == OK else 1)


func _setup_scene(packed: PackedScene) -> bool:
	var camera := Camera3D.new()
	camera.far = 100.0
	get_root().add_child(camera)  # at the origin, looking down -Z; the crowd is at +Z
	camera.make_current()
	_vp = get_root().get_viewport_rid()
	_scenario = get_root().find_world_3d().scenario
	RenderingServer.viewport_set_measure_render_time(_vp, true)
	var probe := packed.instantiate()
	var body := Util.find_named(probe, "Body") as MeshInstance3D
	if body == null:
		var meshes := Util.find_meshes(probe)
		body = meshes[0] if not meshes.is_empty() else null
	if body == null:
		printerr("bench_update: the soldier has no mesh")
		probe.free()
		return false
	_mesh = body.mesh
	probe.free()
	return true


## Two input sets for `n` actors on a grid behind the camera; set 1 moves, turns and changes every clip.
func _make_inputs(n: int, clip_count: int) -> void:
	var side := ceili(sqrt(float(n)))
	_sets.clear()
	for s in 2:
		var positions := PackedVector3Array()
		var yaws := PackedFloat32Array()
		var clips := PackedInt32Array()
		var starts := PackedFloat32Array()
		var custom := PackedColorArray()
		var buffer := PackedFloat32Array()
		var rows := PackedFloat32Array()
		positions.resize(n)
		yaws.resize(n)
		clips.resize(n)
		starts.resize(n)
		custom.resize(n)
		buffer.resize(n * 16)
		rows.resize(n * 12)
		var shift := 0.25 * s
		for i in n:
			var p := Vector3((i % side) * SPACING + shift - side * SPACING * 0.5, 0.0, 10.0 + (i / side) * SPACING + shift)
			var yaw := fmod(i * 0.37 + s * 0.5, TAU)
			var clip := (i + s) % clip_count
			var start := -fmod(i * 0.013, 2.0) - s * 0.5
			positions[i] = p
			yaws[i] = yaw
			clips[i] = clip
			starts[i] = start
			custom[i] = Color(clip, start, 1.0, 0.0)
			# MultiMesh 3D layout: 3x4 row-major basis + origin, then 4 floats of custom data.
			var c := cos(yaw)
			var sn := sin(yaw)
			var o := i * 16
			buffer[o + 0] = c
			buffer[o + 1] = 0.0
			buffer[o + 2] = sn
			buffer[o + 3] = p.x
			buffer[o + 4] = 0.0
			buffer[o + 5] = 1.0
			buffer[o + 6] = 0.0
			buffer[o + 7] = p.y
			buffer[o + 8] = -sn
			buffer[o + 9] = 0.0
			buffer[o + 10] = c
			buffer[o + 11] = p.z
			buffer[o + 12] = clip
			buffer[o + 13] = start
			buffer[o + 14] = 1.0
			buffer[o + 15] = 0.0
			for k in 12:
				rows[i * 12 + k] = buffer[o + k]
		_sets.append({"positions": positions, "yaws": yaws, "clips": clips, "starts": starts,
			"custom": custom, "buffer": buffer, "rows": rows})
	_ids.resize(n)
	_ids_shifted.resize(n)
	for i in n:
		_ids[i] = i
		_ids_shifted[i] = (i + 1) % n
	var extent := Vector3(side * SPACING + 2.0, 3.0, side * SPACING + 2.0)
	_aabb = AABB(Vector3(-side * SPACING * 0.5 - 1.0, -0.5, 9.0), extent)


## Transform3D arrays for the per-call paths (built only when needed: at a million actors they are large).
func _make_xforms() -> void:
	for s in _sets:
		var positions: PackedVector3Array = s.positions
		var yaws: PackedFloat32Array = s.yaws
		var xforms: Array[Transform3D] = []
		xforms.resize(positions.size())
		for i in positions.size():
			xforms[i] = Transform3D(Basis(Vector3.UP, yaws[i]), positions[i])
		s["xforms"] = xforms


## Runs every path once on a small crowd, unrecorded: the first use of each material compiles its shaders on
## worker threads, which on two cores would slow whichever path is measured first.
func _warm_up(clip_count: int) -> void:
	_make_inputs(1000, clip_count)
	_make_xforms()
	var results := _results.duplicate()
	await _measure("set_buffer", 1000, WARMUP_FRAMES, _setup_multimesh, _push_set_buffer, _free_multimesh)
	await _measure("per_instance_rs", 1000, WARMUP_FRAMES, _setup_multimesh, _push_per_instance, _free_multimesh)
	if _vat != null:
		await _measure("vat_bulk", 1000, WARMUP_FRAMES, _setup_vat, _push_vat_bulk, _free_vat)
		await _measure("vat_immediate", 1000, WARMUP_FRAMES, _setup_vat, _push_vat_immediate, _free_vat)
	for i in 20:
		await process_frame
	_results = results
	_sets.clear()
	print("bench_update: warm-up done")


## Runs one path for warm-up + `frames` frames and records the medians.
func _measure(path: String, n: int, frames: int, setup: Callable, push: Callable, teardown: Callable) -> void:
	_record(path, n, await _sample(n, frames, setup, push, teardown, path.begins_with("vat")))


## Runs one path for warm-up + `frames` frames; returns the per-frame samples
## {cpu, render, wall, submit} (submit only for vat_crowd paths).
func _sample(n: int, frames: int, setup: Callable, push: Callable, teardown: Callable, is_vat: bool) -> Dictionary:
	setup.call(n)
	var got := {"cpu": [], "render": [], "wall": [], "submit": []}
	var last_frame := Time.get_ticks_usec()
	for f in WARMUP_FRAMES + frames:
		var t0 := Time.get_ticks_usec()
		push.call(f % 2)
		var ms := (Time.get_ticks_usec() - t0) / 1000.0
		await RenderingServer.frame_post_draw
		var now := Time.get_ticks_usec()
		if f >= WARMUP_FRAMES:
			got.cpu.append(ms)
			got.render.append(RenderingServer.viewport_get_measured_render_time_cpu(_vp)
				+ RenderingServer.get_frame_setup_time_cpu())
			got.wall.append((now - last_frame) / 1000.0)
			if is_vat:
				got.submit.append(_vat.last_submit_ms())
		last_frame = now
	teardown.call()
	await process_frame
	return got


## Records the medians of `got` (from _sample) as the result of `path` at `n` actors.
func _record(path: String, n: int, got: Dictionary) -> void:
	var entry := {"actors": n, "path": path, "cpu_ms": Util.median(got.cpu), "render_cpu_ms": Util.median(got.render),
		"frames": got.cpu.size(), "frame_ms": Util.median(got.wall)}
	if not got.submit.is_empty():
		entry["submit_ms"] = Util.median(got.submit)
	_results.append(entry)
	print("  %-16s %8d actors: cpu %9.3f ms, render cpu %7.3f ms, frame %9.3f ms (%d frames)%s" % [
		path, n, entry.cpu_ms, entry.render_cpu_ms, entry.frame_ms, entry.frames,
		"" if got.submit.is_empty() else ", submit %.3f ms" % entry.submit_ms])


func _measure_memcpy(n: int, frames: int) -> void:
	var bytes := n * ACTOR_BYTES + n * MODELS_PER_ACTOR * MODEL_INSTANCE_BYTES
	var usec: float = ClassDB.class_call_static("VatCrowdBench", "memcpy_usec", bytes, maxi(frames, 10))
	_results.append({"actors": n, "path": "memcpy", "cpu_ms": usec / 1000.0, "render_cpu_ms": null, "bytes": bytes})
	print("  %-16s %8d actors: cpu %9.3f ms (%d bytes)" % ["memcpy", n, usec / 1000.0, bytes])


# --- baselines --------------------------------------------------------------------------------------------------

func _setup_multimesh(n: int) -> void:
	_mm = RenderingServer.multimesh_create()
	RenderingServer.multimesh_set_mesh(_mm, _mesh.get_rid())
	RenderingServer.multimesh_allocate_data(_mm, n, RenderingServer.MULTIMESH_TRANSFORM_3D, false, true)
	RenderingServer.multimesh_set_custom_aabb(_mm, _aabb)
	_instance = RenderingServer.instance_create2(_mm, _scenario)


func _free_multimesh() -> void:
	RenderingServer.free_rid(_instance)
	RenderingServer.free_rid(_mm)
	_instance = RID()
	_mm = RID()


func _push_set_buffer(s: int) -> void:
	RenderingServer.multimesh_set_buffer(_mm, _sets[s].buffer)


func _push_per_instance(s: int) -> void:
	var mm := _mm
	var xforms: Array[Transform3D] = _sets[s].xforms
	var custom: PackedColorArray = _sets[s].custom
	for i in xforms.size():
		RenderingServer.multimesh_instance_set_transform(mm, i, xforms[i])
		RenderingServer.multimesh_instance_set_custom_data(mm, i, custom[i])


# --- vat_crowd --------------------------------------------------------------------------------------------------

func _setup_vat(_n: int) -> void:
	_vat.make_crowd(get_root())


func _setup_vat_body(_n: int) -> void:
	_vat.make_crowd(get_root(), true)


func _setup_vat_full(_n: int) -> void:
	_vat.make_crowd(get_root(), false, true)


func _free_vat() -> void:
	_vat.free_crowd()


func _push_vat_bulk(s: int) -> void:
	var set_s: Dictionary = _sets[s]
	_vat.push_bulk(set_s.positions, set_s.yaws, set_s.clips, set_s.starts, _ids)


func _push_vat_bulk_new_ids(s: int) -> void:
	var set_s: Dictionary = _sets[s]
	_vat.push_bulk(set_s.positions, set_s.yaws, set_s.clips, set_s.starts, _ids if s == 0 else _ids_shifted)


func _push_vat_bulk_full(s: int) -> void:
	var set_s: Dictionary = _sets[s]
	_vat.push_bulk_full(set_s.rows, set_s.clips, set_s.starts, _ids)


# --- Godot's own texture upload of the same bytes ----------------------------------------------------------

func _setup_upload(n: int) -> void:
	# Data textures are 4096 texels wide; rows as many as the bytes need (as vat_crowd sizes them).
	var specs := [[Image.FORMAT_RGBAF, 16, n * ACTOR_BYTES / 16]]
	for m in MODELS_PER_ACTOR:
		specs.append([Image.FORMAT_RGBA8, 4, n])
	for spec in specs:
		var height := ceili(spec[2] / 4096.0)
		var bytes := PackedByteArray()
		bytes.resize(4096 * height * spec[1])
		bytes.fill(1)
		var img := Image.create_from_data(4096, height, false, spec[0], bytes)
		_upload_images.append(img)
		_upload_textures.append(ImageTexture.create_from_image(img))


func _push_upload(_s: int) -> void:
	for i in _upload_images.size():
		_upload_textures[i].update(_upload_images[i])


func _free_upload() -> void:
	_upload_images.clear()
	_upload_textures.clear()


func _push_vat_immediate(s: int) -> void:
	var set_s: Dictionary = _sets[s]
	_vat.push_immediate(set_s.xforms, set_s.clips, set_s.starts)


# --- report -----------------------------------------------------------------------------------------------------

func _find(n: int, path: String) -> Dictionary:
	for r in _results:
		if r.actors == n and r.path == path:
			return r
	return {}


func _print_ratios(n: int) -> void:
	var goals := {"per_instance_rs": "goal at 100k: >= 20", "set_buffer": "goal: > 1"}
	var mc := _find(n, "memcpy")
	var up := _find(n, "texture_update")
	if not up.is_empty() and not mc.is_empty():
		print("  %d actors: texture_update / memcpy of the same bytes = %.2fx (Godot's own upload)" % [
			n, up.cpu_ms / mc.cpu_ms])
	for ours in ["vat_bulk", "vat_bulk_body"]:
		var bulk := _find(n, ours)
		if bulk.is_empty():
			continue
		for other in ["per_instance_rs", "set_buffer"]:
			var r := _find(n, other)
			if not r.is_empty():
				print("  %d actors: %s / %s = %.2fx (%s)" % [n, other, ours, r.cpu_ms / bulk.cpu_ms, goals[other]])
		if ours == "vat_bulk" and not mc.is_empty():
			print("  %d actors: vat_bulk / memcpy of %d bytes = %.2fx (goal: <= 3)" % [
				n, mc.bytes, bulk.cpu_ms / mc.cpu_ms])


func _print_table() -> void:
	print("")
	print("update benchmark (median ms per frame; %d models per actor)" % MODELS_PER_ACTOR)
	print(Util.pad("actors", 9, true) + "  " + Util.pad("path", 17) + Util.pad("cpu_ms", 11, true)
		+ Util.pad("render_cpu_ms", 15, true) + Util.pad("frames", 8, true))
	for r in _results:
		var render := "-" if r.render_cpu_ms == null else "%.3f" % r.render_cpu_ms
		print(Util.pad(str(r.actors), 9, true) + "  " + Util.pad(r.path, 17) + Util.pad("%.3f" % r.cpu_ms, 11, true)
			+ Util.pad(render, 15, true) + Util.pad(str(r.get("frames", "-")), 8, true))
	var ns: Array = []
	for r in _results:
		if not ns.has(r.actors):
			ns.append(r.actors)
	for n in ns:
		_print_ratios(n)
