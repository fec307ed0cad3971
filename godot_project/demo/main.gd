## vat_crowd demo: a battle of 100,000 baked soldiers (body + sword + shield) in four armies, drawn by one
## AnimatedActorMeshInstance per formation block of 2,500 (see battle.gd).
##
## User arguments (after `--`):
##   --actors N         soldiers (default 100000)
##   --frames N         quit after N frames of battle (the bake does not count)
##   --screenshot PATH  save the last frame as PNG before quitting (with --frames)
##   --sim-step S       advance the battle S seconds per frame (default with --frames: 0.1, so a scripted run
##                      shows the same battle on any machine; otherwise real time)
##   --start-time T     simulate the first T seconds of battle before the first frame (default with --frames:
##                      25, so even a short scripted run shows the fronts fighting; otherwise 0)
##   --seed N           formation layout seed
##   --view NAME        starting camera: front (default, over the middle of the front), overview,
##                      closeup (a few metres from where the fronts meet)
##   --no-shadows       the sun casts no shadows
## Prints `DEMO fps=.. actors=.. models=.. drawn_lods=.. vertices=.. submit_ms=.. frame_ms=..` every second and
## at the end (drawn_lods: actors drawn per level of detail after culling; vertices: drawn in the view).
extends Node3D

const SOLDIER_SCENE := "res://demo/character/generated/soldier.tscn"
const REQUIRED_CLASSES: Array[String] = ["VertexAnimation", "AnimatedActorMeshInstance"]
const MAX_REAL_STEP := 0.1  ## seconds; longer frames slow the battle down instead of jumping
const SCRIPTED_START_TIME := 25.0  ## seconds of battle simulated before the first frame of a --frames run
const PREROLL_STEP := 0.1

@onready var _camera: Camera3D = $Camera
@onready var _label: Label = $Overlay/Stats
@onready var _sun: DirectionalLight3D = $Sun

var _actors := 100000
var _frames_limit := -1
var _screenshot := ""
var _sim_step := 0.0
var _seed := 7
var _start_time := -1.0
var _shadows := true
var _view := "front"

var _battle: Node3D
var _frame := 0
var _finishing := false
# Figures of the last one-second window, for the overlay and the DEMO lines.
var _window_start := 0
var _window_frames := 0
var _window_frame_usec := 0
var _window_submit_ms := 0.0
var _window_logic_ms := 0.0
var _last_frame_usec := 0
var _fps := 0.0
var _frame_ms := 0.0
var _submit_ms := 0.0
var _logic_ms := 0.0


func _ready() -> void:
	_parse_args()
	_sun.rotation_degrees = Vector3(-42.0, -35.0, 0.0)
	_sun.shadow_enabled = _shadows
	_label.text = "vat_crowd demo: baking the soldier..."
	for c in REQUIRED_CLASSES:
		if not ClassDB.class_exists(c):
			_fail("class %s is not registered: build the extension (cargo xtask build) and enable addons/vat_crowd" % c)
			return
	_start.call_deferred()


func _parse_args() -> void:
	var args := OS.get_cmdline_user_args()
	var i := 0
	while i < args.size():
		var a := args[i]
		var value: String = args[i + 1] if i + 1 < args.size() else ""
		match a:
			"--actors":
				_actors = maxi(1, value.to_int())
				i += 1
			"--frames":
				_frames_limit = maxi(1, value.to_int())
				i += 1
			"--screenshot":
				_screenshot = value
				i += 1
			"--sim-step":
				_sim_step = maxf(0.0, value.to_float())
				i += 1
			"--seed":
				_seed = value.to_int()
				i += 1
			"--start-time":
				_start_time = maxf(0.0, value.to_float())
				i += 1
			"--view":
				_view = value
				i += 1
			"--no-shadows":
				_shadows = false
			_:
				push_warning("demo: unknown argument '%s' ignored" % a)
		i += 1
	if _frames_limit > 0 and _sim_step == 0.0 and "--sim-step" not in args:
		_sim_step = 0.1
	if _start_time < 0.0:
		_start_time = SCRIPTED_START_TIME if _frames_limit > 0 else 0.0


func _start() -> void:
	await get_tree().process_frame  # show the "baking" text first
	var models: RefCounted = load("res://demo/soldier_models.gd").new()
	if models.load_or_bake(SOLDIER_SCENE) != OK:
		_fail(models.error)
		return
	print("DEMO models %s in %.0f ms (%s)" % [
		"baked" if models.baked else "loaded from user://vat_cache", models.elapsed_ms,
		ProjectSettings.globalize_path("user://vat_cache")])
	_battle = load("res://demo/battle.gd").new()
	_battle.name = "Battle"
	add_child(_battle)
	_battle.setup(models.models, _actors, _seed)
	while _battle.time < _start_time - 1e-6:
		_battle.step(minf(PREROLL_STEP, _start_time - _battle.time))
	_place_camera(_view)
	_window_start = Time.get_ticks_usec()
	_last_frame_usec = _window_start


func _place_camera(view_name: String) -> void:
	var view: Dictionary = _battle.get_overview()
	var south: Vector3 = view.center - Vector3(0, 0, view.width * 0.5)
	match view_name:
		"overview":
			_camera.look_at_point(view.center, PI + 0.6, deg_to_rad(-32.0), view.width * 0.75)
		"closeup":
			_camera.look_at_point(south + Vector3(0.0, 1.0, 12.0), PI + 0.7, deg_to_rad(-14.0), 10.0)
		_:
			if view_name != "front":
				push_warning("demo: unknown view '%s'; using front" % view_name)
			# Over the front south of its middle, looking north along it: all four armies and where they meet.
			_camera.look_at_point(view.center - Vector3(0.0, 0.0, 35.0), PI + 0.5, deg_to_rad(-22.0), 70.0)


func _process(delta: float) -> void:
	if _battle == null or _finishing:
		return
	var dt := _sim_step if _sim_step > 0.0 else minf(delta, MAX_REAL_STEP)
	_battle.step(dt)
	_frame += 1
	var now := Time.get_ticks_usec()
	_window_frames += 1
	_window_frame_usec += now - _last_frame_usec
	_window_submit_ms += _battle.last_submit_ms
	_window_logic_ms += _battle.last_logic_ms
	_last_frame_usec = now
	var last := _frames_limit > 0 and _frame >= _frames_limit
	if now - _window_start >= 1000000 or last:
		_close_window(now)
		if not last:
			_print_stats()
	_update_label()
	if last:
		_finish()


func _close_window(now: int) -> void:
	if _window_frames == 0:
		return
	_fps = _window_frames * 1e6 / maxf(1.0, now - _window_start)
	_frame_ms = _window_frame_usec / 1000.0 / _window_frames
	_submit_ms = _window_submit_ms / _window_frames
	_logic_ms = _window_logic_ms / _window_frames
	_window_start = now
	_window_frames = 0
	_window_frame_usec = 0
	_window_submit_ms = 0.0
	_window_logic_ms = 0.0


func _stats_line() -> String:
	return "DEMO fps=%.1f actors=%d models=%d drawn_lods=%s vertices=%d submit_ms=%.3f frame_ms=%.1f logic_ms=%.3f frame=%d time=%.1f dead=%d" % [
		_fps, _battle.get_actor_count(), _battle.get_model_instance_count(), _battle.get_lod_counts(),
		_battle.get_drawn_vertex_count(), _submit_ms, _frame_ms, _logic_ms, _frame, _battle.time, _battle.dead]


func _print_stats() -> void:
	print(_stats_line())


func _update_label() -> void:
	var lods: PackedInt32Array = _battle.get_lod_counts()
	var drawn := 0
	var per_lod := PackedStringArray()
	for i in lods.size():
		drawn += lods[i]
		per_lod.append("LOD%d %d" % [i, lods[i]])
	_label.text = ("FPS %.1f   frame %.1f ms\nactors %d   models %d   crowd nodes %d\n"
		+ "drawn %d actors (%s), %.2fM vertices\n"
		+ "submit %.3f ms CPU (battle logic %.3f ms)\nbattle %.0f s, fallen %d\n"
		+ "WASD/arrows pan, wheel zoom, right-drag orbit, Q/E rotate") % [
		_fps, _frame_ms, _battle.get_actor_count(), _battle.get_model_instance_count(), _battle.get_node_count(),
		drawn, ", ".join(per_lod), _battle.get_drawn_vertex_count() / 1e6,
		_submit_ms, _logic_ms, _battle.time, _battle.dead]


func _finish() -> void:
	_finishing = true
	if not _screenshot.is_empty():
		await RenderingServer.frame_post_draw
		var img := get_viewport().get_texture().get_image()
		var path := _screenshot if _screenshot.is_absolute_path() else ProjectSettings.globalize_path(_screenshot)
		DirAccess.make_dir_recursive_absolute(path.get_base_dir())
		var err := img.save_png(path)
		if err != OK:
			printerr("DEMO error: cannot save the screenshot to %s: %s" % [path, error_string(err)])
		else:
			print("DEMO screenshot %s (%dx%d)" % [path, img.get_width(), img.get_height()])
	_print_stats()
	get_tree().quit(0)


func _fail(message: String) -> void:
	printerr("DEMO error: " + message)
	_label.text = "vat_crowd demo cannot start:\n" + message
	if _frames_limit > 0:
		get_tree().quit(1)
