# Every way a user reaches a bake gives the same data as VertexAnimation.bake() in a running game
# (which the render tier compares with Godot's own posing): bake.gd --all, the inspector buttons of
# VertexAnimation and VertexAnimationBaker, and a SceneTree script's _initialize (refused, with an
# error that says why, until the tree runs). `cargo xtask bake` is checked by the xtask itself.
extends VatTest

const QUIRKY := "res://generated/quirky.tscn"
const ALL_DIR := "user://bake_all"


func before_all() -> void:
	QuirkyCharacter.save(QUIRKY)


func _reference(path: String) -> VertexAnimation:
	var va := VertexAnimation.new()
	va.source_scene = load(path)
	check_eq(va.bake(), OK, "reference bake of %s" % path)
	return va


## Requires `va` to decode exactly like `ref` at every frame of every clip.
func _same(label: String, va: VertexAnimation, ref: VertexAnimation) -> void:
	if not check(va != null and va.is_baked(), "%s is baked" % label):
		return
	if not check_eq(va.get_clip_names(), ref.get_clip_names(), "%s clips" % label):
		return
	var differing := 0
	for c in ref.get_clip_count():
		for f in ref.get_clip_frame_count(c):
			if va.decode_frame(c, f) != ref.decode_frame(c, f):
				differing += 1
	check_eq(differing, 0, "%s: frames that differ from the in-game bake" % label)


func _godot(args: Array) -> Dictionary:
	var log := []
	var code := OS.execute(OS.get_executable_path(), args, log, true)
	return {"code": code, "text": "\n".join(log)}


func test_bake_all_folder() -> void:
	var dir := ProjectSettings.globalize_path(ALL_DIR)
	DirAccess.make_dir_recursive_absolute(dir.path_join("sub"))
	var paths := {QUIRKY: ALL_DIR.path_join("quirky.res"), "res://generated/soldier.tscn": ALL_DIR.path_join("sub/soldier.tres")}
	for source in paths:
		var va := VertexAnimation.new()
		va.source_scene = load(source)
		check_eq(ResourceSaver.save(va, paths[source]), OK, "unbaked %s saved" % paths[source])
	var run := _godot(["--headless", "--path", ProjectSettings.globalize_path("res://"),
		"--script", "res://addons/vat_crowd/bake.gd", "--", "--all", ALL_DIR])
	check_eq(run["code"], 0, "bake.gd --all exits 0 (%s)" % run["text"].right(800))
	check(run["text"].contains("baked 2 VertexAnimation(s)"), "it baked both: %s" % run["text"].right(300))
	for source in paths:
		var baked := ResourceLoader.load(paths[source], "", ResourceLoader.CACHE_MODE_IGNORE) as VertexAnimation
		_same("bake.gd --all " + paths[source], baked, _reference(source))


func test_bake_in_initialize_is_refused_until_the_tree_runs() -> void:
	var run := _godot(["--headless", "--path", ProjectSettings.globalize_path("res://"),
		"-s", "res://lib/bake_in_initialize.gd", "--", QUIRKY])
	var text: String = run["text"]
	check_eq(run["code"], 0, "refused in _initialize, baked with motion later (%s)" % text.right(1200))
	check(text.contains("SceneTree is not running yet"), "the refusal says why: %s" % text.right(1200))


func test_inspector_button_of_vertex_animation() -> void:
	var va := VertexAnimation.new()
	va.source_scene = load(QUIRKY)
	var button: Callable = va.get("bake_button")
	check(button.is_valid(), "the Bake button's callable exists")
	button.call()
	_same("VertexAnimation's Bake button", va, _reference(QUIRKY))


func test_inspector_button_of_the_baker_node() -> void:
	var baker := VertexAnimationBaker.new()
	root.add_child(baker)
	baker.add_child(load(QUIRKY).instantiate())
	var target := VertexAnimation.new()
	var targets: Array[VertexAnimation] = [target]
	baker.targets = targets
	var button: Callable = baker.get("bake_button")
	check(button.is_valid(), "the baker's Bake button's callable exists")
	button.call()
	_same("VertexAnimationBaker's Bake button", target, _reference(QUIRKY))
