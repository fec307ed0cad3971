## Frame benchmark: whole-frame time (CPU and rendering; on lavapipe the rendering is CPU too) of the demo battle
## with the sun's shadows on, at 3,000 and 30,000 soldiers (and 100,000 with --full), in a wide RTS view and
## zoomed into the crowd, with the crowd nodes' culling and LOD off and on. Prints the vertices drawn per frame.
## A benchmark, never a timed test.
##
## Run under the real renderer at one resolution throughout (cargo xtask bench frame passes --resolution):
##   godot --path godot_project --resolution 640x360 -s res://bench/bench_frame.gd -- [--quick] [--full]
##       [--actors 30000,100000] [--views wide] [--storages auto,vertices] [--lods on] [--frames N]
##       --out /abs/frame.json
##
## Per configuration: WARMUP_FRAMES unrecorded frames, then 3 frames (median; 2 with --quick, 1 from 30,000 soldiers
## on, where lavapipe takes minutes per frame). The report is rewritten after every configuration, so a run stopped
## early keeps what it measured. The battle advances 0.1 s per
## frame, so its soldiers move and the blocks re-submit as in the demo. Culling and LOD are set only where the
## crowd nodes have the properties (`culling`, `force_lod`); without them "on" equals "off" and is not measured.
## "On" keeps the demo's `shadow_lod`; "off" sets -1 (every level casts its own shadow, here all LOD0).
## Every configuration runs with both crowd frames: "frame": "cpu" (gpu_driven off) and "gpu" (the GPU-driven
## frame, the default in Forward+ and Mobile; its counts come back a frame or two late, so it gets GPU_SETTLE more
## warm-up frames, as does the first configuration after a switch). The vertex counts of a gpu row should equal
## its cpu row's. And with the models in two storages (VertexAnimation.storage), "storage": "auto" (the default,
## which bakes the soldier's body as bone textures) and "vertices" (the classic VAT).
extends SceneTree

const Models := preload("res://demo/soldier_models.gd")
const SOLDIER_SCENE := "res://demo/character/generated/soldier.tscn"
const START_TIME := 25.0  ## seconds of battle simulated first, as a scripted demo run does
const SIM_STEP := 0.1
const WARMUP_FRAMES := 1
## Extra warm-up frames for the GPU-driven frame, whose counts are read back a frame or two late.
const GPU_SETTLE := 3
## The storages a run can measure (--storages), by VertexAnimation.storage value.
const STORAGES := {"auto": 2, "vertices": 0, "bones": 1}

var _frames := 3
var _opts: Dictionary
var _size := Vector2.ZERO
var _results: Array = []
var _notes: Array = []
var _main: Node3D
var _camera  ## the demo's camera rig (camera_rig.gd)
var _models: Array[VertexAnimation] = []
## Per model, per level: vertices of that level's mesh (level 0: the baked mesh).
var _level_vertices: Array = []


func _initialize() -> void:
	_run.call_deferred()


func _run() -> void:
	var opts := _parse_args()
	_opts = opts
	if opts.quick:
		_frames = 2
	if opts.frames > 0:
		_frames = opts.frames
	DisplayServer.window_set_vsync_mode(DisplayServer.VSYNC_DISABLED)
	var size := get_root().get_visible_rect().size
	_size = size
	print("bench_frame: %s, renderer %s, %s, %dx%d" % [Engine.get_version_info().string,
		RenderingServer.get_current_rendering_method(), RenderingServer.get_video_adapter_name(), size.x, size.y])
	if DisplayServer.get_name() == "headless":
		printerr("bench_frame: needs the real renderer (--headless draws nothing)")
		quit(2)
		return
	if not ClassDB.class_exists("AnimatedActorMeshInstance"):
		printerr("bench_frame: AnimatedActorMeshInstance is not registered (extension not built?)")
		quit(1)
		return
	# Each storage's models (VertexAnimation.storage: Auto, which bakes the soldier's body in bones, and
	# Vertices), baked once and measured in the same run.
	var baked := {}
	for storage: String in opts.storages:
		var models: RefCounted = Models.new()
		if models.load_or_bake(SOLDIER_SCENE, STORAGES[storage]) != OK:
			printerr("bench_frame: " + models.error)
			quit(1)
			return
		baked[storage] = models.models
	# The demo's scene (sun with shadows, sky, ground, camera) without its script: the benchmark drives the battle.
	_main = (load("res://demo/main.tscn") as PackedScene).instantiate()
	_main.set_script(null)
	get_root().add_child(_main)
	_camera = _main.get_node("Camera")
	var sun := _main.get_node("Sun") as DirectionalLight3D
	sun.rotation_degrees = Vector3(-42.0, -35.0, 0.0)
	sun.shadow_enabled = true
	(_main.get_node("Overlay") as CanvasLayer).visible = false

	var counts: Array = [3000] if opts.quick else [3000, 30000]
	if opts.full:
		counts.append(100000)
	if not opts.actors.is_empty():
		counts = opts.actors
	for n in counts:
		for storage: String in opts.storages:
			_models = baked[storage]
			_count_level_vertices()
			await _measure_battle(n, storage)
	_print_table()
	var err := _write_report()
	_main.queue_free()
	await process_frame
	quit(0 if err == OK else 1)


func _write_report() -> Error:
	return _write_json(_opts.out, {
		"results": _results,
		"frames_per_configuration": "%d (1 from 30,000 soldiers on)" % _frames,
		"warmup_frames": WARMUP_FRAMES,
		"resolution": "%dx%d" % [_size.x, _size.y],
		"godot": Engine.get_version_info().string,
		"adapter": RenderingServer.get_video_adapter_name(),
		"notes": _notes + [
			"frame_ms: median wall time from one frame_post_draw to the next (battle step, submits, rendering).",
			"vertices: per frame in the camera pass, from get_lod_counts() and each level's mesh where the nodes"
			+ " have it, else every actor's models at full detail.",
			"shadow_vertices: what each shadow split draws at most (get_drawn_shadow_vertex_count where the nodes"
			+ " have it, else the camera pass's vertices).",
		],
	})


func _count_level_vertices() -> void:
	_level_vertices.clear()
	for va in _models:
		var levels: Array = [va.vertex_count]
		if va.has_method("get_lod_count") and va.has_method("get_lod_mesh"):
			for level in range(1, va.call("get_lod_count")):
				var mesh: Mesh = va.call("get_lod_mesh", level)
				var v := 0
				if mesh != null:
					for s in mesh.get_surface_count():
						v += (mesh as ArrayMesh).surface_get_array_len(s)
				levels.append(v)
		_level_vertices.append(levels)


func _measure_battle(n: int, storage: String) -> void:
	print("bench_frame: %d soldiers, %s storage: setting up the battle" % [n, storage])
	var stored := []
	for va in _models:
		stored.append("bones" if va.baked_storage == 1 else "vertices")
	if storage == "auto":
		_notes.append("%d soldiers, storage auto: the models were baked in %s storage" % [n, ", ".join(stored)])
	var battle: Node3D = load("res://demo/battle.gd").new()
	battle.name = "Battle"
	_main.add_child(battle)
	battle.setup(_models, n, 7)
	while battle.time < START_TIME - 1e-6:
		battle.step(SIM_STEP)
	var nodes := battle.find_children("*", "AnimatedActorMeshInstance", true, false)
	var has_culling: bool = not nodes.is_empty() and "culling" in nodes[0]
	var has_lod: bool = not nodes.is_empty() and "force_lod" in nodes[0]
	if not has_culling and not has_lod:
		_notes.append("%d soldiers: the crowd nodes have no culling or LOD properties; lod 'on' not measured" % n)
	var view: Dictionary = battle.get_overview()
	# "on" is the demo as it ships (its shadow_lod too); "off" draws every level's own shadow.
	var demo_shadow_lod: int = nodes[0].get("shadow_lod") if has_lod else -1
	for view_name in ["wide", "zoom"]:
		if not _opts.views.is_empty() and not _opts.views.has(view_name):
			continue
		if view_name == "wide":
			_camera.look_at_point(view.center, PI + 0.6, deg_to_rad(-32.0), view.width * 0.75)
		else:
			_camera.look_at_point(view.center, PI + 0.5, deg_to_rad(-22.0), 30.0)
		var last_kind := "gpu"  # the nodes' default
		for config in [["off", "cpu"], ["on", "cpu"], ["off", "gpu"], ["on", "gpu"]]:
			if not _opts.lods.has(config[0]):
				continue
			var lod: String = config[0]
			var kind: String = config[1]
			var on: bool = lod == "on"
			if on and not has_culling and not has_lod:
				_results.append({"actors": n, "view": view_name, "lod": lod, "frame": kind, "storage": storage,
					"frame_ms": null, "vertices": null})
				continue
			for node: Node in nodes:
				if "gpu_driven" in node:
					node.set("gpu_driven", kind == "gpu")
				if has_culling:
					node.set("culling", on)
				if has_lod:
					node.set("force_lod", -1 if on else 0)
					node.set("shadow_lod", demo_shadow_lod if on else -1)
			var times: Array = []
			var vertices := 0
			var shadow_vertices := 0
			var last := Time.get_ticks_usec()
			var frames := _frames if n < 30000 or _opts.frames > 0 else 1
			# Switching crowd frames rebuilds the nodes' GPU objects (the actor nodes drop their actors until the
			# battle submits again), and the GPU frame's counts come back late: settle after a switch.
			var warmup := WARMUP_FRAMES + (GPU_SETTLE if kind != last_kind or kind == "gpu" else 0)
			last_kind = kind
			for f in warmup + frames:
				battle.step(SIM_STEP)
				await RenderingServer.frame_post_draw
				var now := Time.get_ticks_usec()
				if f >= warmup:
					times.append((now - last) / 1000.0)
				last = now
				vertices = _vertices(nodes)
				shadow_vertices = _shadow_vertices(nodes, vertices)
			var active: bool = nodes.any(func(node: Node) -> bool:
				return node.has_method("is_gpu_driven_active") and node.call("is_gpu_driven_active"))
			if kind == "gpu" and not active:
				_notes.append("%d soldiers, %s, lod %s: the GPU-driven frame did not run on this renderer" % [n, view_name, lod])
			var entry := {"actors": n, "view": view_name, "lod": lod, "frame": kind, "storage": storage,
				"frame_ms": _median(times),
				"vertices": vertices, "shadow_vertices": shadow_vertices}
			_results.append(entry)
			_write_report()
			print("  %6d soldiers, %-4s view, culling+LOD %-3s, %s frame, %s storage: frame %9.1f ms, %d vertices, %d per shadow split (%d frames)" % [
				n, view_name, lod, kind, storage, entry.frame_ms, vertices, shadow_vertices, times.size()])
	battle.queue_free()
	await process_frame


## Vertices drawn in the camera pass this frame, summed over the crowd nodes.
func _vertices(nodes: Array[Node]) -> int:
	var total := 0
	for node in nodes:
		if node.has_method("get_lod_counts"):
			var counts: PackedInt32Array = node.call("get_lod_counts")
			for level in counts.size():
				for levels: Array in _level_vertices:
					total += counts[level] * int(levels[mini(level, levels.size() - 1)])
		else:
			for m in _level_vertices.size():
				total += node.get_model_instance_count(m) * int(_level_vertices[m][0])
	return total


## Vertices each shadow split draws at most this frame, summed over the crowd nodes (where they
## report it; else every drawn vertex casts).
func _shadow_vertices(nodes: Array[Node], drawn: int) -> int:
	if nodes.is_empty() or not nodes[0].has_method("get_drawn_shadow_vertex_count"):
		return drawn
	var total := 0
	for node in nodes:
		total += node.call("get_drawn_shadow_vertex_count")
	return total


func _print_table() -> void:
	print("")
	print("frame benchmark (median ms per frame, %d frames per configuration)" % _frames)
	for r: Dictionary in _results:
		var ms := "-" if r.frame_ms == null else "%.1f" % r.frame_ms
		print("  %7d  %-5s lod %-4s %s %-8s %10s ms  %12s vertices" % [r.actors, r.view, r.lod, r.frame, r.storage, ms, str(r.vertices)])
	for n in [3000, 30000, 100000, 1000000]:
		for view_name in ["wide", "zoom"]:
			for storage: String in _opts.storages:
				for kind in ["cpu", "gpu"]:
					var off := _find(n, view_name, "off", kind, storage)
					var on := _find(n, view_name, "on", kind, storage)
					if not off.is_empty() and not on.is_empty() and on.frame_ms != null:
						print("  %d soldiers, %s, %s frame, %s storage: off / on = %.2fx" % [n, view_name, kind, storage, off.frame_ms / on.frame_ms])
				for lod in ["off", "on"]:
					var cpu := _find(n, view_name, lod, "cpu", storage)
					var gpu := _find(n, view_name, lod, "gpu", storage)
					if not cpu.is_empty() and not gpu.is_empty() and gpu.frame_ms != null:
						print("  %d soldiers, %s, lod %s, %s storage: cpu / gpu frame = %.2fx, vertices cpu %s gpu %s%s" % [n, view_name,
							lod, storage, cpu.frame_ms / gpu.frame_ms, cpu.vertices, gpu.vertices,
							"" if cpu.vertices == gpu.vertices else " (DIFFER)"])
			for lod in ["off", "on"]:
				for kind in ["cpu", "gpu"]:
					var auto := _find(n, view_name, lod, kind, "auto")
					var vertices := _find(n, view_name, lod, kind, "vertices")
					if not auto.is_empty() and not vertices.is_empty() and vertices.frame_ms != null and auto.frame_ms != null:
						print("  %d soldiers, %s, lod %s, %s frame: auto (bones) / vertices storage = %.2fx" % [n, view_name, lod, kind,
							auto.frame_ms / vertices.frame_ms])


func _find(n: int, view_name: String, lod: String, kind := "cpu", storage := "auto") -> Dictionary:
	for r: Dictionary in _results:
		if r.actors == n and r.view == view_name and r.lod == lod and r.get("frame", "cpu") == kind \
				and r.get("storage", "auto") == storage:
			return r
	return {}


# --- the few helpers of tests/bench/bench_util.gd this project needs (a separate Godot project) -----------------

func _parse_args() -> Dictionary:
	var result := {"quick": false, "full": false, "out": "", "actors": [], "views": [], "storages": ["auto", "vertices"],
		"lods": ["off", "on"], "frames": 0}
	var args := OS.get_cmdline_user_args()
	var i := 0
	while i < args.size():
		match args[i]:
			"--quick":
				result.quick = true
			"--full":
				result.full = true
			"--out":
				i += 1
				result.out = args[i] if i < args.size() else ""
			"--actors":
				i += 1
				for a in (args[i] if i < args.size() else "").split(",", false):
					result.actors.append(int(a))
			"--views":
				i += 1
				result.views = Array((args[i] if i < args.size() else "").split(",", false))
			"--frames":
				i += 1
				result.frames = int(args[i]) if i < args.size() else 0
			"--lods":
				i += 1
				result.lods = Array((args[i] if i < args.size() else "").split(",", false))
			"--storages":
				i += 1
				result.storages = Array((args[i] if i < args.size() else "").split(",", false)).filter(
					func(s: String) -> bool: return STORAGES.has(s))
			_:
				push_warning("bench_frame: unknown argument '%s' ignored" % args[i])
		i += 1
	return result


static func _median(values: Array) -> float:
	var sorted := values.duplicate()
	sorted.sort()
	var n := sorted.size()
	if n == 0:
		return NAN
	return float(sorted[n / 2]) if n % 2 == 1 else 0.5 * (sorted[n / 2 - 1] + sorted[n / 2])


static func _write_json(path: String, data: Dictionary) -> Error:
	if path.is_empty():
		return OK
	DirAccess.make_dir_recursive_absolute(path.get_base_dir())
	var f := FileAccess.open(path, FileAccess.WRITE)
	if f == null:
		printerr("bench_frame: cannot write '%s': %s" % [path, error_string(FileAccess.get_open_error())])
		return FileAccess.get_open_error()
	f.store_string(JSON.stringify(data, "  ", false) + "\n")
	f.close()
	print("bench_frame: wrote %s" % path)
	return OK
