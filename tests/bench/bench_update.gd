## Update benchmark: the CPU cost of one battle frame's push. N actors carry 3 models (body and sword on every
## actor, a shield on two in three); every actor moves and turns every frame; 2% start a new clip with a
## cross-fade; equipment does not change; the camera sees about a third of the crowd. Side by side:
##   per_instance_rs   three MultiMeshes from GDScript: multimesh_instance_set_transform per model instance, and
##                     multimesh_instance_set_custom_data for the instances whose animation changed,
##   set_buffer        three MultiMeshes, one multimesh_set_buffer each (16 floats per instance), prepacked
##                     outside the timing: the best a compiled caller gets (body and sword share one buffer),
##   set_buffer_gd     the same, with GDScript packing the buffers from the same inputs each frame,
##   texture_floor     one ImageTexture.update of 16 bytes per actor, prepacked: the floor of a data texture path,
##   vat_bulk          AnimatedActorMeshInstance as a game drives it in bulk: actors and model lists set once, then
##                     each frame set_actor_placements (one PackedVector4Array) + set_actor_clips and
##                     set_actor_blends (the 2%) + submit, with the CPU frame (gpu_driven off; every vat_ path
##                     but vat_gpu runs it),
##   vat_gpu           the same with the GPU-driven frame (gpu_driven, the default in Forward+ and Mobile): the CPU
##                     cost is the uploads and scheduling the compute pass; the pass's own time, from the rendering
##                     device's timestamps, is reported apart (gpu_pass_ms; on lavapipe it runs on the CPU),
##   vat_gpu_nodes     vat_gpu's frame over 10 crowd nodes of a tenth of the actors each, as a game with ten unit
##                     types (each its own clips) has them: what a node costs per frame whatever its size,
##   vat_set_actors    the same frame re-sent whole: set_actors + set_actor_blends + set_model_actors x3 (unchanged
##                     lists) + submit,
##   vat_immediate     begin, add_actor + add_model per model per actor, set_actor_blend for the 2%, submit (every
##                     argument passed, so GDScript calls through its fast path),
##   vat_immediate_defaults  the same with add_model's optional arguments left out (GDScript's slow generic call),
##   vat_immediate_equipped  begin, one add_equipped_actor per actor (its models from one of two equipment sets
##                     defined once), set_actor_blend for the 2%, submit,
##   vat_all_states    vat_set_actors in the frame the benchmark measured before: every actor's clip changes,
## with the bytes each path hands the engine per frame. A benchmark, never a timed test.
##
## Run under the real renderer (--headless turns MultiMesh calls into no-ops):
##   godot --path tests -s res://bench/bench_update.gd -- [--quick] [--paths vat_bulk,set_buffer] [--actors 100000] [--scene-nodes N] --out /abs/update.json
## --scene-nodes N puts N plain Node3Ds in the tree beside the crowd, as a game's level would (0 by default).
##
## Each push is timed twice: cpu_ms, the wall time around it, and thread_cpu_ms, the CPU time the main thread and the
## extension's worker threads ran during it (VatCrowdBench.cpu_usec, Linux; only with the bench build). On lavapipe
## the "GPU" is the same two cores: while a push runs, the rasteriser's threads still execute the previous frame's
## GPU work (for vat_gpu, its compute pass over every actor), and the push's wall time counts the time they held the
## cores. Goals are printed for both.
##
## Every path runs in 3 interleaved rounds (a slow spell of a shared machine hits each alike); the GDScript loops
## measure fewer frames per round (4 at 100,000 actors), and at a million actors, where they take seconds per frame,
## one round of 3 frames. Inputs are two precomputed sets
## that alternate frame by frame (set 1 moves and turns every actor, and 2% of actors play another clip than in
## set 0), so GDScript math is measured only where GDScript packs or calls per instance, which is the point.
## The camera looks down on the crowd's middle third but renders no layer (cull_mask 0): on lavapipe the "GPU"
## is the same two CPU cores, and rasterising the crowd would swamp the figures. Uploads happen regardless, and
## a node that culls against the camera sees the third it would draw.
extends SceneTree

const Util := preload("res://bench/bench_util.gd")
const DEFAULT_SCENE := "res://generated/soldier.tscn"  ## override with --scene res://...
const FPS := 30.0
const WARMUP_FRAMES := 3
## vat_gpu_nodes: crowd nodes the actors are split over.
const NODES := 10
const SPACING := 1.5
## One actor in CHANGE_EVERY starts a new clip each frame (2%), cross-fading over BLEND_TIME seconds.
const CHANGE_EVERY := 50
const BLEND_TIME := 0.25
## Actor i carries a shield unless i % 3 == 2.
const MODELS_PER_ACTOR := 3
## The paths that loop in GDScript, measured over fewer frames (seconds per frame at a million actors).
const SLOW_PATHS := ["per_instance_rs", "set_buffer_gd", "vat_immediate", "vat_immediate_defaults",
	"vat_immediate_equipped"]
const ROUNDS := 3
## MultiMesh bytes per instance: a 3x4 transform and 4 floats of custom data.
const MM_BYTES := 64
const MM_TRANSFORM_BYTES := 48
const MM_CUSTOM_BYTES := 16
## vat_crowd's actor record (bytes) and model instance texel, as main uploads them.
const VAT_ACTOR_BYTES := 32
const VAT_MODEL_BYTES := 4

var _opts: Dictionary
var _scene_path := DEFAULT_SCENE
var _vp: RID
var _scenario: RID
var _camera: Camera3D
var _meshes: Array[Mesh] = []  ## body, sword, shield
var _vat: RefCounted = null  ## bench_update_vat.gd, when the extension is there
var _results: Array = []
var _notes: Array = []
## VatCrowdBench.cpu_usec is there (the bench build of the extension).
var _has_cpu_clock := false

# Inputs of the current actor count (see _make_inputs).
var _sets: Array = []
var _ids := PackedInt32Array()
var _shield_ids := PackedInt32Array()
var _changers := PackedInt32Array()
var _aabb := AABB()
## The clips actors play between changes (the looped ones, when the extension says which).
var _steady_clips := PackedInt32Array()
# The baselines' objects.
var _mms: Array[RID] = []
var _instances: Array[RID] = []
var _floor_images: Array[Image] = []
var _floor_texture: ImageTexture
var _gd_body := PackedFloat32Array()
var _gd_shield := PackedFloat32Array()


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
	_has_cpu_clock = ClassDB.class_exists("VatCrowdBench") and int(ClassDB.class_call_static("VatCrowdBench", "cpu_usec")) >= 0
	if not _has_cpu_clock:
		_notes.append("thread_cpu_ms not measured: needs the bench build's VatCrowdBench.cpu_usec on Linux")
	if ClassDB.class_exists("AnimatedActorMeshInstance") and ClassDB.class_exists("VertexAnimation"):
		_vat = load("res://bench/bench_update_vat.gd").new()
		if _vat.bake_models(packed, FPS) != OK:
			quit(1)
			return
		clip_count = _vat.clip_count()
		_steady_clips = _vat.looped_clips()
	else:
		printerr("bench_update: AnimatedActorMeshInstance is not registered (extension not built?); baselines only")
		_notes.append("vat_crowd classes missing: vat paths not measured")

	if _steady_clips.is_empty():
		for c in clip_count:
			_steady_clips.append(c)
	await _warm_up(clip_count)
	var counts: Array = [10000, 100000] if _opts.quick else [10000, 100000, 1000000]
	if not _opts.actors.is_empty():
		counts = Array(_opts.actors)
	var frames: int = 6 if _opts.quick else 30
	var rounds: int = 1 if _opts.quick else ROUNDS
	var fast := [
		["set_buffer", _setup_multimeshes, _push_set_buffer, _free_multimeshes],
		["texture_floor", _setup_floor, _push_floor, _free_floor],
	]
	if _vat != null:
		fast.append_array([
			["vat_bulk", _setup_vat, _push_vat_bulk, _free_vat],
			["vat_gpu", _setup_vat_gpu, _push_vat_bulk, _free_vat],
			["vat_gpu_nodes", _setup_vat_gpu_nodes, _push_vat_gpu_nodes, _free_vat],
			["vat_set_actors", _setup_vat, _push_vat_set_actors, _free_vat],
			["vat_all_states", _setup_vat, _push_vat_all_states, _free_vat],
		])
	var slow := [
		["per_instance_rs", _setup_multimeshes, _push_per_instance, _free_multimeshes],
		["set_buffer_gd", _setup_multimeshes, _push_set_buffer_gd, _free_multimeshes],
	]
	if _vat != null:
		slow.append(["vat_immediate", _setup_vat, _push_vat_immediate, _free_vat])
		slow.append(["vat_immediate_defaults", _setup_vat, _push_vat_immediate_defaults, _free_vat])
		slow.append(["vat_immediate_equipped", _setup_vat, _push_vat_immediate_equipped, _free_vat])
	if not _opts.paths.is_empty():
		fast = fast.filter(func(p: Array) -> bool: return p[0] in _opts.paths)
		slow = slow.filter(func(p: Array) -> bool: return p[0] in _opts.paths)
	for n in counts:
		print("bench_update: %d actors: preparing inputs" % n)
		_make_inputs(n, clip_count)
		_aim_camera(n)
		var samples: Dictionary = await _sample_rounds(n, fast, rounds, frames / rounds)
		for path: Array in fast:
			_record(path[0], n, samples[path[0]])
		# The GDScript loops take seconds per frame at a million actors: fewer frames there, in one round; below,
		# interleaved rounds like the fast paths, since their ratio to per_instance_rs is a goal.
		var slow_rounds := 1 if n >= 1000000 else rounds
		var slow_per_round := 3 if n >= 1000000 else (4 if n >= 100000 else frames / rounds)
		if slow_rounds * slow_per_round < frames:
			_notes.append("%s at %d actors: %d frames measured in %d round(s)" % [", ".join(SLOW_PATHS), n,
				slow_rounds * slow_per_round, slow_rounds])
		var slow_samples: Dictionary = await _sample_rounds(n, slow, slow_rounds, slow_per_round)
		for path: Array in slow:
			_record(path[0], n, slow_samples[path[0]])
		_sets.clear()
		_print_ratios(n)

	_print_table()
	var report := {
		"results": _results,
		"workload": "battle frame: 3 models (shield on 2 in 3 actors), every actor moves and turns, "
			+ "2% start a new clip with a cross-fade, equipment unchanged, a third of the crowd in view",
		"character": _scene_path,
		"scene_nodes": int(_opts.scene_nodes),
		"warmup_frames": WARMUP_FRAMES,
		"godot": Engine.get_version_info().string,
		"adapter": RenderingServer.get_video_adapter_name(),
		"notes": _notes + [
			"cpu_ms: median wall time of the push per frame (GDScript + engine calls, incl. vat_crowd's submit);"
			+ " thread_cpu_ms: median CPU time the main thread and the extension's workers ran during it;"
			+ " render_cpu_ms: median of viewport_get_measured_render_time_cpu + get_frame_setup_time_cpu.",
			"bytes: what the path hands the engine per frame (vat paths: the node's own count where it has one).",
			"the camera renders no layer (cull_mask 0) so lavapipe does not rasterise; uploads happen regardless.",
		],
	}
	var err := Util.write_json(_opts.out, report)
	quit(0 if err == OK else 1)


## Samples every path of `paths` ([name, setup, push, free]) for `per_round` frames, `rounds` times interleaved (a slow
## spell of a shared machine hits each path alike); returns each path's samples, merged.
func _sample_rounds(n: int, paths: Array, rounds: int, per_round: int) -> Dictionary:
	var samples := {}
	for r in rounds:
		for path: Array in paths:
			var got: Dictionary = await _sample(n, per_round, path[1], path[2], path[3], path[0].begins_with("vat"))
			if not samples.has(path[0]):
				samples[path[0]] = got
			else:
				for key: String in got:
					samples[path[0]][key].append_array(got[key])
	return samples


func _setup_scene(packed: PackedScene) -> bool:
	_camera = Camera3D.new()
	_camera.cull_mask = 0
	_camera.rotation_degrees = Vector3(-90, 0, 0)  # looking straight down
	get_root().add_child(_camera)
	_camera.make_current()
	_vp = get_root().get_viewport_rid()
	_scenario = get_root().find_world_3d().scenario
	RenderingServer.viewport_set_measure_render_time(_vp, true)
	var level := Node3D.new()
	level.name = "Level"
	for i in int(_opts.scene_nodes):
		level.add_child(Node3D.new())
	get_root().add_child(level)
	var probe := packed.instantiate()
	for node_name in ["Body", "Sword", "Shield"]:
		var mi := Util.find_named(probe, node_name) as MeshInstance3D
		if mi == null or mi.mesh == null:
			printerr("bench_update: the soldier has no mesh '%s'" % node_name)
			probe.free()
			return false
		_meshes.append(mi.mesh)
	probe.free()
	return true


## Puts the camera above the crowd's middle at the height where it sees a third of the square grid, and prints the
## fraction of actors actually in its frustum.
func _aim_camera(n: int) -> void:
	var side := ceili(sqrt(float(n))) * SPACING
	var size := get_root().get_visible_rect().size
	var aspect := size.x / maxf(size.y, 1.0)
	var half_tan := tan(deg_to_rad(_camera.fov * 0.5))
	var height := side / (2.0 * half_tan * sqrt(3.0 * aspect))
	_camera.position = Vector3(0, height, 0)
	_camera.far = height + 10.0
	var positions: PackedVector3Array = _sets[0].positions
	var seen := 0
	var step := maxi(1, n / 5000)
	var tested := 0
	for i in range(0, n, step):
		tested += 1
		if _camera.is_position_in_frustum(positions[i]):
			seen += 1
	print("bench_update: %d actors: camera at %.1f m sees %.0f%% of them" % [n, height, 100.0 * seen / tested])


## Two input sets for `n` actors on a square grid around the origin. Set 1 moves and turns every actor. Actors play
## looped clips (idle, walk, run); the 2% in _changers play another clip (any, the death too), started later, in
## each set, so each frame 2% change clip relative to the last.
## The "all" arrays give every actor another clip in each set (the old workload).
func _make_inputs(n: int, clip_count: int) -> void:
	var side := ceili(sqrt(float(n)))
	_ids.resize(n)
	_shield_ids.clear()
	_changers.clear()
	for i in n:
		_ids[i] = i
		if i % 3 != 2:
			_shield_ids.append(i)
		if i % CHANGE_EVERY == 0:
			_changers.append(i)
	_sets.clear()
	for s in 2:
		var positions := PackedVector3Array()
		var yaws := PackedFloat32Array()
		var clips := PackedInt32Array()
		var starts := PackedFloat32Array()
		var clips_all := PackedInt32Array()
		var starts_all := PackedFloat32Array()
		var custom := PackedColorArray()
		var body := PackedFloat32Array()
		var shield := PackedFloat32Array()
		var floor_bytes := PackedFloat32Array()
		for a: Variant in [positions, yaws, clips, starts, clips_all, starts_all, custom]:
			a.resize(n)
		body.resize(n * 16)
		shield.resize(_shield_ids.size() * 16)
		floor_bytes.resize(n * 4)
		var shift := 0.25 * s
		var k := 0
		for i in n:
			var p := Vector3((i % side - side * 0.5) * SPACING + shift, 0.0, ((i / side) - side * 0.5) * SPACING + shift)
			var yaw := fmod(i * 0.37 + s * 0.5, TAU)
			var changes := i % CHANGE_EVERY == 0
			var clip := _steady_clips[i % _steady_clips.size()]
			if changes and s == 1:
				clip = (clip + 1 + (i / CHANGE_EVERY) % (clip_count - 1)) % clip_count if clip_count > 1 else clip
			var start := -fmod(i * 0.013, 2.0) + (0.5 * s if changes else 0.0)
			positions[i] = p
			yaws[i] = yaw
			clips[i] = clip
			starts[i] = start
			clips_all[i] = (i + s) % clip_count
			starts_all[i] = -fmod(i * 0.013, 2.0) - s * 0.5
			custom[i] = Color(clip, start, 1.0, 0.0)
			_write_instance(body, i, p, yaw, custom[i])
			if i % 3 != 2:
				_write_instance(shield, k, p, yaw, custom[i])
				k += 1
			floor_bytes[i * 4] = p.x
			floor_bytes[i * 4 + 1] = p.z
			floor_bytes[i * 4 + 2] = yaw
			floor_bytes[i * 4 + 3] = clip
		_sets.append({"positions": positions, "yaws": yaws, "clips": clips, "starts": starts,
			"clips_all": clips_all, "starts_all": starts_all, "custom": custom, "body": body, "shield": shield,
			"floor": floor_bytes.to_byte_array()})
	# The blends of each set: the changers cross-fade from the clip they played in the other set.
	for s in 2:
		var other: Dictionary = _sets[1 - s]
		var prev_clips := PackedInt32Array()
		var prev_starts := PackedFloat32Array()
		var blend_times := PackedFloat32Array()
		var changer_clips := PackedInt32Array()
		var changer_starts := PackedFloat32Array()
		for i in _changers:
			prev_clips.append(other.clips[i])
			prev_starts.append(other.starts[i])
			blend_times.append(BLEND_TIME)
			changer_clips.append(_sets[s].clips[i])
			changer_starts.append(_sets[s].starts[i])
		_sets[s]["changer_clips"] = changer_clips
		_sets[s]["changer_starts"] = changer_starts
		_sets[s]["prev_clips"] = prev_clips
		_sets[s]["prev_starts"] = prev_starts
		_sets[s]["blend_times"] = blend_times
	for s in _sets:
		var xforms: Array[Transform3D] = []
		xforms.resize(n)
		var placements := PackedVector4Array()
		placements.resize(n)
		var positions: PackedVector3Array = s.positions
		var yaws: PackedFloat32Array = s.yaws
		for i in n:
			xforms[i] = Transform3D(Basis(Vector3.UP, yaws[i]), positions[i])
			placements[i] = Vector4(positions[i].x, positions[i].y, positions[i].z, yaws[i])
		s["xforms"] = xforms
		s["placements"] = placements
	var extent := side * SPACING + 2.0
	_aabb = AABB(Vector3(-extent * 0.5, -0.5, -extent * 0.5), Vector3(extent, 3.0, extent))


## One MultiMesh instance (3x4 row-major transform, then custom data) at `slot` of `buffer`.
static func _write_instance(buffer: PackedFloat32Array, slot: int, p: Vector3, yaw: float, custom: Color) -> void:
	var c := cos(yaw)
	var sn := sin(yaw)
	var o := slot * 16
	buffer[o] = c
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
	buffer[o + 12] = custom.r
	buffer[o + 13] = custom.g
	buffer[o + 14] = custom.b
	buffer[o + 15] = custom.a


## Runs every path once on a small crowd, unrecorded: the first use of each material compiles its shaders on
## worker threads, which on two cores would slow whichever path is measured first.
func _warm_up(clip_count: int) -> void:
	_make_inputs(1000, clip_count)
	_aim_camera(1000)
	var results := _results.duplicate()
	await _sample(1000, WARMUP_FRAMES, _setup_multimeshes, _push_set_buffer, _free_multimeshes, false)
	await _sample(1000, WARMUP_FRAMES, _setup_multimeshes, _push_per_instance, _free_multimeshes, false)
	if _vat != null:
		await _sample(1000, WARMUP_FRAMES, _setup_vat, _push_vat_bulk, _free_vat, true)
		await _sample(1000, WARMUP_FRAMES, _setup_vat, _push_vat_immediate, _free_vat, true)
	for i in 20:
		await process_frame
	_results = results
	_sets.clear()
	print("bench_update: warm-up done")


## Runs one path for warm-up + `frames` frames; returns the per-frame samples {cpu, render, wall, submit, bytes}.
func _sample(n: int, frames: int, setup: Callable, push: Callable, teardown: Callable, is_vat: bool) -> Dictionary:
	setup.call(n)
	var got := {"cpu": [], "thread": [], "render": [], "wall": [], "submit": [], "bytes": [], "gpu_pass": []}
	var last_frame := Time.get_ticks_usec()
	for f in WARMUP_FRAMES + frames:
		var c0 := _cpu_usec()
		var t0 := Time.get_ticks_usec()
		push.call(f % 2)
		var ms := (Time.get_ticks_usec() - t0) / 1000.0
		var thread_ms := (_cpu_usec() - c0) / 1000.0
		await RenderingServer.frame_post_draw
		var now := Time.get_ticks_usec()
		if f >= WARMUP_FRAMES:
			got.cpu.append(ms)
			if _has_cpu_clock:
				got.thread.append(thread_ms)
			got.render.append(RenderingServer.viewport_get_measured_render_time_cpu(_vp)
				+ RenderingServer.get_frame_setup_time_cpu())
			got.wall.append((now - last_frame) / 1000.0)
			if is_vat:
				got.submit.append(_vat.last_submit_ms())
				got.bytes.append(_vat.last_submit_bytes())
				var pass_ms := _gpu_pass_ms()
				if pass_ms >= 0.0:
					got.gpu_pass.append(pass_ms)
		last_frame = now
	teardown.call()
	await process_frame
	return got


## Records the medians of `got` (from _sample) as the result of `path` at `n` actors.
func _record(path: String, n: int, got: Dictionary) -> void:
	var entry := {"actors": n, "path": path, "cpu_ms": Util.median(got.cpu), "render_cpu_ms": Util.median(got.render),
		"frames": got.cpu.size(), "frame_ms": Util.median(got.wall), "bytes": _bytes(path, n, got)}
	if not got.thread.is_empty():
		entry["thread_cpu_ms"] = Util.median(got.thread)
	if not got.submit.is_empty():
		entry["submit_ms"] = Util.median(got.submit)
	if not got.gpu_pass.is_empty():
		entry["gpu_pass_ms"] = Util.median(got.gpu_pass)
	_results.append(entry)
	print("  %-22s %8d actors: cpu %9.3f ms (thread %s), render cpu %7.3f ms, frame %9.3f ms, %d bytes (%d frames)%s" % [
		path, n, entry.cpu_ms, "%.3f" % entry.thread_cpu_ms if entry.has("thread_cpu_ms") else "-",
		entry.render_cpu_ms, entry.frame_ms, entry.bytes, entry.frames,
		"" if got.submit.is_empty() else ", submit %.3f ms" % entry.submit_ms])


## CPU time (µs) of the main thread and the extension's workers so far, or -1 (see _has_cpu_clock).
func _cpu_usec() -> int:
	return int(ClassDB.class_call_static("VatCrowdBench", "cpu_usec")) if _has_cpu_clock else -1


## The GPU-driven frame's compute passes in the last frame whose timestamps the rendering device has (the
## library captures "vat_crowd frame N begin" and "... end" when VAT_CROWD_GPU_TIMESTAMPS is set, as
## `cargo xtask bench` does), in ms of GPU time (the device's own clock, read in ns); -1 when there are none.
func _gpu_pass_ms() -> float:
	var rd := RenderingServer.get_rendering_device()
	if rd == null:
		return -1.0
	var begins := {}
	var total := 0.0
	var found := false
	for i in rd.get_captured_timestamps_count():
		var name := rd.get_captured_timestamp_name(i)
		if not name.begins_with("vat_crowd frame "):
			continue
		var key := name.trim_suffix(" begin").trim_suffix(" end")
		if name.ends_with(" begin"):
			begins[key] = rd.get_captured_timestamp_gpu_time(i)
		elif begins.has(key):
			# Godot reports GPU timestamps in nanoseconds.
			total += (rd.get_captured_timestamp_gpu_time(i) - begins[key]) / 1000000.0
			found = true
	return total if found else -1.0


## Bytes per frame a path hands the engine: the node's own count when it reports one, else the layout's.
func _bytes(path: String, n: int, got: Dictionary) -> int:
	var instances := 2 * n + _shield_ids.size()
	var changed_instances := 0
	for i in _changers:
		changed_instances += 3 if i % 3 != 2 else 2
	match path:
		"per_instance_rs":
			return instances * MM_TRANSFORM_BYTES + changed_instances * MM_CUSTOM_BYTES
		"set_buffer", "set_buffer_gd":
			return instances * MM_BYTES
		"texture_floor":
			return n * 16
	if not got.bytes.is_empty() and got.bytes[0] >= 0:
		return int(Util.median(got.bytes))
	# main's nodes upload every actor record each submit, and model lists only when they changed (add_model
	# writes them, so the immediate path re-sends them).
	return n * VAT_ACTOR_BYTES + (instances * VAT_MODEL_BYTES if path.begins_with("vat_immediate") else 0)


# --- baselines --------------------------------------------------------------------------------------------------

func _setup_multimeshes(n: int) -> void:
	for m in MODELS_PER_ACTOR:
		var count := _shield_ids.size() if m == 2 else n
		var mm := RenderingServer.multimesh_create()
		RenderingServer.multimesh_set_mesh(mm, _meshes[m].get_rid())
		RenderingServer.multimesh_allocate_data(mm, count, RenderingServer.MULTIMESH_TRANSFORM_3D, false, true)
		RenderingServer.multimesh_set_custom_aabb(mm, _aabb)
		_mms.append(mm)
		_instances.append(RenderingServer.instance_create2(mm, _scenario))
	_gd_body.resize(n * 16)
	_gd_shield.resize(_shield_ids.size() * 16)


func _free_multimeshes() -> void:
	for rid in _instances:
		RenderingServer.free_rid(rid)
	for rid in _mms:
		RenderingServer.free_rid(rid)
	_instances.clear()
	_mms.clear()
	_gd_body = PackedFloat32Array()
	_gd_shield = PackedFloat32Array()


func _push_set_buffer(s: int) -> void:
	var set_s: Dictionary = _sets[s]
	RenderingServer.multimesh_set_buffer(_mms[0], set_s.body)
	RenderingServer.multimesh_set_buffer(_mms[1], set_s.body)
	RenderingServer.multimesh_set_buffer(_mms[2], set_s.shield)


## What a GDScript game pays for set_buffer: packing the buffers from positions, yaws and animation state.
func _push_set_buffer_gd(s: int) -> void:
	var set_s: Dictionary = _sets[s]
	var positions: PackedVector3Array = set_s.positions
	var yaws: PackedFloat32Array = set_s.yaws
	var custom: PackedColorArray = set_s.custom
	# Taken out of the members while written, so the writes do not copy a shared array.
	var body := _gd_body
	var shield := _gd_shield
	_gd_body = PackedFloat32Array()
	_gd_shield = PackedFloat32Array()
	var k := 0
	for i in positions.size():
		var p := positions[i]
		var c := cos(yaws[i])
		var sn := sin(yaws[i])
		var cu := custom[i]
		var o := i * 16
		body[o] = c
		body[o + 1] = 0.0
		body[o + 2] = sn
		body[o + 3] = p.x
		body[o + 4] = 0.0
		body[o + 5] = 1.0
		body[o + 6] = 0.0
		body[o + 7] = p.y
		body[o + 8] = -sn
		body[o + 9] = 0.0
		body[o + 10] = c
		body[o + 11] = p.z
		body[o + 12] = cu.r
		body[o + 13] = cu.g
		body[o + 14] = cu.b
		body[o + 15] = cu.a
		if i % 3 != 2:
			var q := k * 16
			for j in 16:
				shield[q + j] = body[o + j]
			k += 1
	RenderingServer.multimesh_set_buffer(_mms[0], body)
	RenderingServer.multimesh_set_buffer(_mms[1], body)
	RenderingServer.multimesh_set_buffer(_mms[2], shield)
	_gd_body = body
	_gd_shield = shield


func _push_per_instance(s: int) -> void:
	var set_s: Dictionary = _sets[s]
	var body := _mms[0]
	var sword := _mms[1]
	var shield := _mms[2]
	var xforms: Array[Transform3D] = set_s.xforms
	var custom: PackedColorArray = set_s.custom
	var k := 0
	for i in xforms.size():
		var xf := xforms[i]
		RenderingServer.multimesh_instance_set_transform(body, i, xf)
		RenderingServer.multimesh_instance_set_transform(sword, i, xf)
		if i % 3 != 2:
			RenderingServer.multimesh_instance_set_transform(shield, k, xf)
			k += 1
	for i in _changers:
		RenderingServer.multimesh_instance_set_custom_data(body, i, custom[i])
		RenderingServer.multimesh_instance_set_custom_data(sword, i, custom[i])
		if i % 3 != 2:
			RenderingServer.multimesh_instance_set_custom_data(shield, i - i / 3, custom[i])


func _setup_floor(n: int) -> void:
	# One RGBAF texel per actor, 4096 texels wide, as vat_crowd sizes its data textures.
	var height := ceili(n / 4096.0)
	for s in _sets:
		var bytes: PackedByteArray = s.floor
		bytes.resize(4096 * height * 16)
		_floor_images.append(Image.create_from_data(4096, height, false, Image.FORMAT_RGBAF, bytes))
	_floor_texture = ImageTexture.create_from_image(_floor_images[0])


func _push_floor(s: int) -> void:
	_floor_texture.update(_floor_images[s])


func _free_floor() -> void:
	_floor_images.clear()
	_floor_texture = null


# --- vat_crowd --------------------------------------------------------------------------------------------------

func _setup_vat(_n: int) -> void:
	_vat.make_crowd(get_root())


func _setup_vat_gpu(_n: int) -> void:
	_vat.make_crowd(get_root(), true)
	if not _vat.crowd.gpu_driven or RenderingServer.get_rendering_device() == null:
		_notes.append("vat_gpu: this renderer has no rendering device, so it measured the CPU frame")


func _setup_vat_gpu_nodes(_n: int) -> void:
	_vat.make_crowds(get_root(), NODES, _sets, _changers)


func _push_vat_gpu_nodes(s: int) -> void:
	_vat.push_moves_nodes(s)


func _free_vat() -> void:
	_vat.free_crowd()


func _push_vat_bulk(s: int) -> void:
	_vat.push_moves(_sets[s], _ids, _shield_ids, _changers)


func _push_vat_set_actors(s: int) -> void:
	_vat.push_battle(_sets[s], _ids, _shield_ids, _changers, false)


func _push_vat_all_states(s: int) -> void:
	_vat.push_battle(_sets[s], _ids, _shield_ids, _changers, true)


func _push_vat_immediate(s: int) -> void:
	_vat.push_immediate(_sets[s], _changers)


func _push_vat_immediate_defaults(s: int) -> void:
	_vat.push_immediate(_sets[s], _changers, true)


func _push_vat_immediate_equipped(s: int) -> void:
	_vat.push_equipped(_sets[s], _changers)


# --- report -----------------------------------------------------------------------------------------------------

func _find(n: int, path: String) -> Dictionary:
	for r in _results:
		if r.actors == n and r.path == path:
			return r
	return {}


func _print_ratios(n: int) -> void:
	for key: String in ["cpu_ms", "thread_cpu_ms"]:
		_print_ratios_of(n, key)


## The goals' ratios at `n` actors from each result's `key` (cpu_ms: wall time; thread_cpu_ms: CPU time).
func _print_ratios_of(n: int, key: String) -> void:
	var ms := func(r: Dictionary) -> float: return r.get(key, -1.0)
	var tag := "" if key == "cpu_ms" else " [thread cpu]"
	var gpu := _find(n, "vat_gpu")
	if not gpu.is_empty() and ms.call(gpu) > 0.0:
		var gpu_goals := {"texture_floor": ["vat_gpu / texture_floor", "<= 2"],
			"per_instance_rs": ["per_instance_rs / vat_gpu", ">= 30"], "set_buffer": ["set_buffer / vat_gpu", ">= 3"]}
		for other: String in gpu_goals:
			var r := _find(n, other)
			if r.is_empty() or ms.call(r) <= 0.0:
				continue
			var ratio: float = ms.call(gpu) / ms.call(r) if other == "texture_floor" else ms.call(r) / ms.call(gpu)
			print("  %d actors: %s = %.2fx (goal at 100k: %s)%s" % [n, gpu_goals[other][0], ratio, gpu_goals[other][1],
				tag])
		if gpu.has("gpu_pass_ms") and key == "cpu_ms":
			print("  %d actors: vat_gpu compute pass %.3f ms of GPU time (rendering-device timestamps)" % [n, gpu.gpu_pass_ms])
		var nodes := _find(n, "vat_gpu_nodes")
		if not nodes.is_empty():
			print("  %d actors: vat_gpu_nodes / vat_gpu = %.2fx (the same actors over %d nodes)%s" % [n,
				ms.call(nodes) / ms.call(gpu), NODES, tag])
		var small_gpu := _find(n / 10, "vat_gpu")
		if n >= 1000000 and not small_gpu.is_empty() and ms.call(small_gpu) > 0.0:
			print("  %d actors: vat_gpu / vat_gpu at %d = %.2fx (goal: <= 12)%s" % [n, n / 10,
				ms.call(gpu) / ms.call(small_gpu), tag])
	var bulk := _find(n, "vat_bulk")
	if bulk.is_empty() or ms.call(bulk) <= 0.0:
		return
	var set_buffer := _find(n, "set_buffer")
	if not set_buffer.is_empty() and ms.call(set_buffer) > 0.0:
		print("  %d actors: vat_bulk / set_buffer = %.2fx (goal at 100k: <= 1)%s" % [n,
			ms.call(bulk) / ms.call(set_buffer), tag])
	# The CPU frame's one goal is the line above; the ratios below are information (their first
	# goals, >= 30 and >= 3, and <= 2 to the floor, are the GPU frame's now: see vat_gpu's lines).
	for other: String in ["per_instance_rs", "set_buffer", "set_buffer_gd", "vat_immediate"]:
		var r := _find(n, other)
		if not r.is_empty() and ms.call(r) > 0.0:
			print("  %d actors: %s / vat_bulk = %.2fx%s" % [n, other, ms.call(r) / ms.call(bulk), tag])
	var floor_r := _find(n, "texture_floor")
	if not floor_r.is_empty() and ms.call(floor_r) > 0.0:
		print("  %d actors: vat_bulk / texture_floor = %.2fx%s" % [n,
			ms.call(bulk) / ms.call(floor_r), tag])
	var rs := _find(n, "per_instance_rs")
	for path: String in ["vat_immediate", "vat_immediate_equipped"]:
		var imm := _find(n, path)
		if not imm.is_empty() and not rs.is_empty() and ms.call(rs) > 0.0:
			print("  %d actors: %s / per_instance_rs = %.2fx (goal: <= 1.5)%s" % [n, path, ms.call(imm) / ms.call(rs), tag])
	var small := _find(n / 10, "vat_bulk")
	if n >= 1000000 and not small.is_empty() and ms.call(small) > 0.0:
		print("  %d actors: vat_bulk / vat_bulk at %d = %.2fx (goal: <= 12)%s" % [n, n / 10,
			ms.call(bulk) / ms.call(small), tag])


func _print_table() -> void:
	print("")
	print("update benchmark, battle frame (median ms per frame)")
	print(Util.pad("actors", 9, true) + "  " + Util.pad("path", 23) + Util.pad("cpu_ms", 11, true)
		+ Util.pad("thread_cpu_ms", 15, true) + Util.pad("render_cpu_ms", 15, true) + Util.pad("bytes", 12, true) + Util.pad("frames", 8, true))
	for r in _results:
		var thread := "%.3f" % r.thread_cpu_ms if r.has("thread_cpu_ms") else "-"
		print(Util.pad(str(r.actors), 9, true) + "  " + Util.pad(r.path, 23) + Util.pad("%.3f" % r.cpu_ms, 11, true)
			+ Util.pad(thread, 15, true) + Util.pad("%.3f" % r.render_cpu_ms, 15, true) + Util.pad(str(r.bytes), 12, true)
			+ Util.pad(str(r.frames), 8, true))
	var ns: Array = []
	for r in _results:
		if not ns.has(r.actors):
			ns.append(r.actors)
	for n in ns:
		_print_ratios(n)
