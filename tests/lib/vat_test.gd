## Base of every test script under tests/unit and tests/render (run by tests/runner.gd).
##
## A test script `extends VatTest` and defines `func test_*()` methods (coroutines allowed);
## optional `before_all()` / `after_all()` run once around them. Each test gets a fresh `root`
## (a Node3D under the scene tree, freed after the test). A test fails when any check fails or
## `fail()` is called; `skip()` marks it skipped. Render helpers (`capture`, `image_diff`) need
## the real renderer: those tests live in tests/render and run under `--render`.
class_name VatTest
extends RefCounted

## The runner's SceneTree.
var tree: SceneTree
## A fresh container under `tree.root` for the current test; freed after it.
var root: Node3D

var _failures: PackedStringArray = []
## Soldier body bakes made by `soldier_body`, by precision (one per test script).
var _soldier_bodies := {}
var _skip_reason := ""


## Passes when `cond` is true; otherwise records `msg` as a failure. Returns `cond`.
func check(cond: bool, msg: String) -> bool:
	if not cond:
		fail(msg)
	return cond


## Passes when `a` equals `b` (numbers compare by value, other types must match exactly).
func check_eq(a: Variant, b: Variant, msg: String) -> bool:
	var same := _equal(a, b)
	if not same:
		fail("%s: got %s, expected %s" % [msg, _show(a), _show(b)])
	return same


## Passes when |a - b| <= tol.
func check_near(a: float, b: float, tol: float, msg: String) -> bool:
	var ok := absf(a - b) <= tol
	if not ok:
		fail("%s: got %s, expected %s +- %s" % [msg, a, b, tol])
	return ok


## Passes when every channel of `a` is within `tol` (0..1) of `b`'s.
func check_color(a: Color, b: Color, tol: float, msg: String) -> bool:
	var ok := absf(a.r - b.r) <= tol and absf(a.g - b.g) <= tol and absf(a.b - b.b) <= tol \
		and absf(a.a - b.a) <= tol
	if not ok:
		fail("%s: got %s, expected %s +- %s" % [msg, a, b, tol])
	return ok


## Records a failure; the test goes on (so that later checks still report).
func fail(msg: String) -> void:
	_failures.append(msg)


## Marks the test skipped (unless it also failed). Return right after calling it.
func skip(reason: String) -> void:
	_skip_reason = reason


## Waits `n` process frames.
func frames(n: int) -> void:
	for i in n:
		await tree.process_frame


## The render tests' scene: a dark background, grey ambient light, a sun (casting shadows when
## `shadows`), and a current camera at `cam_pos` looking at `look_at`, all under `root`.
func stage(cam_pos: Vector3, look_at: Vector3, shadows := false) -> void:
	var env := WorldEnvironment.new()
	env.environment = Environment.new()
	env.environment.background_mode = Environment.BG_COLOR
	env.environment.background_color = Color(0.1, 0.1, 0.12)
	env.environment.ambient_light_source = Environment.AMBIENT_SOURCE_COLOR
	env.environment.ambient_light_color = Color(0.3, 0.3, 0.3)
	root.add_child(env)
	var sun := DirectionalLight3D.new()
	sun.rotation_degrees = Vector3(-50, 30, 0)
	sun.shadow_enabled = shadows
	root.add_child(sun)
	var cam := Camera3D.new()
	root.add_child(cam)
	cam.look_at_from_position(cam_pos, look_at)
	cam.current = true


## "soldier" (the generated soldier) and every .glb/.gltf in res://assets_local/: a file dropped
## there is tested with no code change.
func soldier_and_shared_characters() -> Array:
	var out := ["soldier"]
	for f in DirAccess.get_files_at("res://assets_local"):
		if f.get_extension().to_lower() in ["glb", "gltf"]:
			out.append(f)
	return out


## The clips of `scene`'s first AnimationPlayer as Godot lists them, RESET left out (empty
## without a player): the truth a bake's clip list is checked against.
func scene_clips(scene: PackedScene) -> PackedStringArray:
	var node := scene.instantiate()
	var players := node.find_children("*", "AnimationPlayer", true, false)
	var out := PackedStringArray()
	if not players.is_empty():
		for n in (players[0] as AnimationPlayer).get_animation_list():
			if n != "RESET":
				out.append(n)
	node.free()
	return out


## The generated soldier's Body mesh (res://generated/soldier.tscn, Skeleton/Body) baked at
## `precision` (0 half, 1 float), with one level (`lod_enabled` off: tests that want levels give
## it `lod_meshes` or bake their own): baked once per test script and shared by its tests.
func soldier_body(precision := 0) -> VertexAnimation:
	if not _soldier_bodies.has(precision):
		var va := VertexAnimation.new()
		va.source_scene = load("res://generated/soldier.tscn")
		va.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
		va.precision = precision
		va.lod_enabled = false
		va.bake()
		_soldier_bodies[precision] = va
	return _soldier_bodies[precision]


## `scene` posed by its own AnimationPlayer at `t` s into `clip`, under `root`.
func skeletal_at(scene: PackedScene, clip: String, t: float) -> Node3D:
	var character := scene.instantiate() as Node3D
	root.add_child(character)
	var player: AnimationPlayer = character.find_children("*", "AnimationPlayer", true, false)[0]
	player.play(clip)
	player.seek(t, true)
	player.pause()
	return character


## Captures `scene` drawn by its skeleton at `t` s into clip `clip` of `va`, then by one
## AnimatedMeshInstance instance of `va` at the same time; returns [skeletal, vat] images.
func capture_skeletal_and_vat(scene: PackedScene, va: VertexAnimation, clip: int, t: float) -> Array:
	var skeletal := skeletal_at(scene, va.get_clip_names()[clip], t)
	var a := await capture()
	skeletal.queue_free()
	var b := await capture_vat(va, clip, t)
	return [a, b]


## One AnimatedMeshInstance instance of `va` at the origin, paused at `t` s into `clip`, as the
## root viewport draws it; the node is gone when this returns.
func capture_vat(va: VertexAnimation, clip: int, t: float) -> Image:
	var crowd := AnimatedMeshInstance.new()
	crowd.animation = va
	crowd.paused = true
	root.add_child(crowd)
	crowd.time = 0.0
	crowd.add_instance(Transform3D.IDENTITY, clip)
	crowd.time = t
	crowd.submit()
	return await _capture_and_free(crowd, va)


## One actor of `va` drawn by AnimatedActorMeshInstance as a game's battle frame brings it there:
## a frame with it and a second actor far away, turned, playing the next clip from 0.3 s; then a
## frame of `set_actor_placements` moving it to the origin unturned and `set_actor_clips`
## switching it to `clip` at `t` s. `gpu_driven` as the node's property (its default: the
## GPU-driven frame where the renderer has one; false: the CPU frame, which reads the records the
## placement writer left behind). The node is gone when this returns.
func capture_actor_moved_in(va: VertexAnimation, clip: int, t: float, gpu_driven := true) -> Image:
	var crowd := AnimatedActorMeshInstance.new()
	crowd.models = [va] as Array[VertexAnimation]
	crowd.paused = true
	crowd.gpu_driven = gpu_driven
	root.add_child(crowd)
	crowd.time = t
	var far := Vector3(40, 0, 300)
	var other := (clip + 1) % va.get_clip_count()
	crowd.set_actors(PackedVector3Array([far, far + Vector3(3, 0, 0)]), PackedFloat32Array([2.0, 1.0]),
		PackedInt32Array([other, 0]), PackedFloat32Array([0.3, 0.0]))
	crowd.set_model_actors(0, PackedInt32Array([0, 1]))
	crowd.submit()
	await capture()
	crowd.set_actor_placements(PackedVector4Array([Vector4(0, 0, 0, 0), Vector4(far.x, far.y, far.z + 1, 1.0)]))
	crowd.set_actor_clips(PackedInt32Array([0]), PackedInt32Array([clip]), PackedFloat32Array([0.0]))
	crowd.submit()
	var gpu_frame := RenderingServer.get_current_rendering_method() != "gl_compatibility" and gpu_driven
	check(crowd.is_gpu_driven_active() == gpu_frame, "the actor node runs the %s frame here" % ("GPU" if gpu_frame else "CPU"))
	return await _capture_and_free(crowd, va)


## What the root viewport draws with `crowd` (of `va`) in it, after checking its materials; the
## node is gone when this returns.
func _capture_and_free(crowd: Node, va: VertexAnimation) -> Image:
	var img := await capture()
	check_godot_materials(crowd, va)
	crowd.queue_free()
	await frames(1)
	return img


## Checks that every surface of `crowd` whose source material in `va` is a BaseMaterial3D (or a
## ShaderMaterial) draws with Godot's own shader for it (or the source's shader) plus the VAT
## stage, not the shipped stand-in, in every renderer.
func check_godot_materials(crowd: Node, va: VertexAnimation) -> void:
	var checked := 0
	for child in crowd.get_children(true):
		var mmi := child as MultiMeshInstance3D
		if mmi == null or mmi.multimesh == null:
			continue
		var mesh: Mesh = mmi.multimesh.mesh if mmi.multimesh.mesh != null else mmi.get_meta("_vat_mesh", null)
		if mesh == null:
			continue
		for s in mesh.get_surface_count():
			var source := _source_material(va, mesh.surface_get_name(s), s)
			if not (source is BaseMaterial3D or source is ShaderMaterial):
				continue
			var m := mesh.surface_get_material(s) as ShaderMaterial
			checked += 1
			if not check(m != null and m.shader != null and m.shader.code.contains("vat_vertex_frame(") \
					and m.get_meta("vat_crowd_native", false),
					"surface %d of %s draws with Godot's own material code and the VAT stage" % [s, child.name]):
				return
	check(checked > 0 or not _has_base_material(va), "the crowd's surfaces were found")


func _source_material(va: VertexAnimation, surface_name: String, s: int) -> Material:
	var lod0 := va.get_lod_mesh(0)
	for j in lod0.get_surface_count():
		if not surface_name.is_empty() and lod0.surface_get_name(j) == surface_name:
			return lod0.surface_get_material(j)
	return lod0.surface_get_material(mini(s, lod0.get_surface_count() - 1))


func _has_base_material(va: VertexAnimation) -> bool:
	var lod0 := va.get_lod_mesh(0)
	for j in lod0.get_surface_count():
		if lod0.surface_get_material(j) is BaseMaterial3D or lod0.surface_get_material(j) is ShaderMaterial:
			return true
	return false


## Checks `b` against the reference `a` with the render-equivalence limits (mean absolute
## difference at most 1.5/255, at most 0.5% of pixels off by more than 32/255), printing them.
func check_render_close(label: String, a: Image, b: Image) -> void:
	var d := image_diff(a, b)
	print("    %s: mean %.3f/255, %.4f%% over 32/255" % [label, d["mean_abs"], d["frac_over_32"] * 100.0])
	check(d["mean_abs"] <= 1.5, "%s: mean abs diff %.3f <= 1.5/255" % [label, d["mean_abs"]])
	check(d["frac_over_32"] <= 0.005, "%s: %.4f%% pixels off by > 32/255 <= 0.5%%" % [label, d["frac_over_32"] * 100.0])


## Pixels of `img` that differ from `background` (the same view with nothing in it) by more
## than 8/255 in some channel: what a character covers, with its shadow.
func foreground_count(img: Image, background: Image) -> int:
	var a := _rgb8(img)
	var b := _rgb8(background)
	var n := 0
	for i in range(0, mini(a.size(), b.size()), 3):
		if absi(a[i] - b[i]) > 8 or absi(a[i + 1] - b[i + 1]) > 8 or absi(a[i + 2] - b[i + 2]) > 8:
			n += 1
	return n


## Checks that `b` covers as many pixels as the reference `a` (within `share`, 1% unless given)
## against `background`, printing both counts: a character drawn thicker or thinner than its
## source shows here even where the mean difference is small.
func check_foreground_close(label: String, background: Image, a: Image, b: Image, share := 0.01) -> void:
	var na := foreground_count(a, background)
	var nb := foreground_count(b, background)
	var off := absf(nb - na) / maxf(na, 1.0)
	print("    %s: %d foreground pixels, reference %d (%.2f%% apart)" % [label, nb, na, off * 100.0])
	check(na > 0, "%s: the reference draws something" % label)
	check(off <= share, "%s: foreground %d within %.0f%% of the reference's %d" % [label, nb, share * 100.0, na])


## Waits until a crowd's counts (get_lod_counts, get_lod_instance_count, get_drawn_vertex_count)
## describe the last frame: the GPU-driven frame reads them back a frame or two late.
func settle_counts() -> void:
	await frames(4)


## Waits until the frame drawn after now is complete and returns the root viewport's image.
func capture() -> Image:
	await RenderingServer.frame_post_draw
	await RenderingServer.frame_post_draw
	return tree.root.get_texture().get_image()


## Saves `img` as `name` (".png" added if missing) into $VAT_TEST_OUT, else target/test_out;
## returns the absolute path ("" on failure).
func save_png(img: Image, name: String) -> String:
	var dir := OS.get_environment("VAT_TEST_OUT")
	if dir.is_empty():
		dir = ProjectSettings.globalize_path("res://").path_join("../target/test_out").simplify_path()
	DirAccess.make_dir_recursive_absolute(dir)
	var file := name if name.ends_with(".png") else name + ".png"
	var path := dir.path_join(file.validate_filename())
	var err := img.save_png(path)
	if err != OK:
		fail("cannot save %s: %s" % [path, error_string(err)])
		return ""
	return path


## Compares two images of the same size on RGB (0-255 scale): mean absolute channel difference,
## fraction of pixels where some channel differs by more than 32, and the largest difference.
## Different sizes give the worst figures and "size_mismatch": true.
func image_diff(a: Image, b: Image) -> Dictionary:
	if a == null or b == null or a.get_size() != b.get_size():
		return {"mean_abs": 255.0, "frac_over_32": 1.0, "max": 255, "size_mismatch": true}
	var da := _rgb8(a)
	var db := _rgb8(b)
	var total := 0
	var over := 0
	var largest := 0
	var i := 0
	var n := da.size()
	while i < n:
		var dr := absi(da[i] - db[i])
		var dg := absi(da[i + 1] - db[i + 1])
		var dbl := absi(da[i + 2] - db[i + 2])
		var m := maxi(dr, maxi(dg, dbl))
		total += dr + dg + dbl
		if m > 32:
			over += 1
		if m > largest:
			largest = m
		i += 3
	var pixels := n / 3
	return {
		"mean_abs": float(total) / float(maxi(n, 1)),
		"frac_over_32": float(over) / float(maxi(pixels, 1)),
		"max": largest,
		"size_mismatch": false,
	}


## "res://assets_local/NAME" when the shared asset was copied there by `cargo xtask test`, else "".
## `xforms` (Transform3Ds) as 12 floats each in MultiMesh.buffer's 3D layout: the 3x4 matrix row
## by row, as the crowd nodes' bulk transform calls take them.
func transform_rows(xforms: Array) -> PackedFloat32Array:
	var out := PackedFloat32Array()
	for t: Transform3D in xforms:
		var b := t.basis
		out.append_array([b.x.x, b.y.x, b.z.x, t.origin.x, b.x.y, b.y.y, b.z.y, t.origin.y,
			b.x.z, b.y.z, b.z.z, t.origin.z])
	return out


func asset_path(name: String) -> String:
	var path := "res://assets_local/".path_join(name)
	return path if FileAccess.file_exists(path) else ""


## The asset's path; when it is missing, skips the test (fails it when CI=true) and returns "".
func require_asset(name: String) -> String:
	var path := asset_path(name)
	if path.is_empty():
		var why := "asset %s is missing (expected in ../shared/assets or $VAT_CROWD_ASSETS)" % name
		if in_ci():
			fail(why)
		else:
			skip(why)
	return path


## True under CI (CI set to anything but "", "false" or "0").
func in_ci() -> bool:
	var ci := OS.get_environment("CI")
	return not (ci.is_empty() or ci == "false" or ci == "0")


## True when the real renderer draws (not the dummy one of --headless).
func renders() -> bool:
	return DisplayServer.get_name() != "headless"


# --- used by the runner ---

func _reset() -> void:
	_failures = PackedStringArray()
	_skip_reason = ""


func _failure_text() -> String:
	return "; ".join(_failures)


func _equal(a: Variant, b: Variant) -> bool:
	var numeric := [TYPE_INT, TYPE_FLOAT]
	if typeof(a) in numeric and typeof(b) in numeric:
		return a == b
	if typeof(a) != typeof(b):
		return false
	return a == b


func _show(v: Variant) -> String:
	var s := var_to_str(v) if typeof(v) != TYPE_OBJECT else str(v)
	return s if s.length() <= 200 else s.substr(0, 200) + "..."


func _rgb8(img: Image) -> PackedByteArray:
	var copy := img
	if img.get_format() != Image.FORMAT_RGB8:
		copy = img.duplicate()
		copy.convert(Image.FORMAT_RGB8)
	return copy.get_data()
