# Crowds drawn by the VAT shader against Godot's own skeletal render, under the real renderer.
extends VatTest

const SOLDIER := "res://generated/soldier.tscn"


func _bake(paths: Array, precision := 1, storage := VertexAnimation.STORAGE_AUTO) -> VertexAnimation:
	var va := VertexAnimation.new()
	va.source_scene = load(SOLDIER)
	var typed: Array[NodePath] = []
	for p in paths:
		typed.append(NodePath(p))
	va.meshes = typed
	va.precision = precision
	va.storage = storage
	va.bake()
	return va


## The two storages the shader plays: "bones" (what Auto picks for the soldier) and "vertices".
func _storages() -> Array:
	return ["bones", "vertices"]


## The soldier's body baked in `storage` ("bones" through Auto, the default, or "vertices").
func _body_in(storage: String) -> VertexAnimation:
	var va := _bake(["Skeleton/Body"], 1, VertexAnimation.STORAGE_AUTO if storage == "bones" else VertexAnimation.STORAGE_VERTICES)
	var want := VertexAnimation.STORAGE_BONES if storage == "bones" else VertexAnimation.STORAGE_VERTICES
	check_eq(va.baked_storage, want, "the body bakes in %s storage" % storage)
	return va


func _skeletal(clip: String, t: float) -> Node3D:
	return skeletal_at(load(SOLDIER), clip, t)


# The character drawn by its own scene and by AnimatedMeshInstance, for each clip at three
# times: two baked frames and one half-way between two baked frames.
func _check_equivalence(label: String, scene: PackedScene, clips: Array, view_dir: Vector3) -> void:
	var va := VertexAnimation.new()
	va.source_scene = scene
	va.clips = PackedStringArray(clips)
	if not check_eq(va.bake(), OK, "%s bakes" % label):
		return
	var box := va.get_bounds()
	var center := box.get_center()
	stage(center + view_dir.normalized() * box.size.length() * 1.05, center)
	for clip_name: String in clips:
		var clip := va.find_clip(clip_name)
		var frames := va.get_clip_frame_count(clip)
		var step := 1.0 / va.get_clip_frame_rate(clip)
		var times := [
			va.get_frame_time(clip, frames / 4),
			va.get_frame_time(clip, (frames * 3) / 5),
			va.get_frame_time(clip, frames / 2) + 0.5 * step,
		]
		for t: float in times:
			var shots: Array = await capture_skeletal_and_vat(scene, va, clip, t)
			var name := "%s_%s_%.3f" % [label, clip_name, t]
			save_png(shots[0], "equiv_%s_skeletal" % name)
			save_png(shots[1], "equiv_%s_vat" % name)
			check_render_close(name, shots[0], shots[1])


func test_equivalence_soldier() -> void:
	await _check_equivalence("soldier", load(SOLDIER), ["idle", "walk", "attack"], Vector3(0.55, 0.2, -0.9))


func test_equivalence_robot() -> void:
	var path := require_asset("RobotExpressive.glb")
	if path.is_empty():
		return
	await _check_equivalence("robot", load(path), ["Idle", "Walking", "Punch"], Vector3(0.5, 0.25, 0.9))


func cases_equipment_follows_the_hand() -> Array:
	return _storages()


## Every mesh of the soldier baked as its own model (each with its own bone texture in "bones",
## Auto's pick) on one actor, against the skeleton; then equipment sets and tints.
func test_each_equipment_follows_the_hand(storage: String) -> void:
	stage(Vector3(1.6, 1.4, -2.6), Vector3(0, 0.9, 0))
	var paths := _soldier_mesh_paths()
	var models: Array[VertexAnimation] = []
	var want := VertexAnimation.STORAGE_BONES if storage == "bones" else VertexAnimation.STORAGE_VERTICES
	for p in paths:
		models.append(_bake([p], 1, VertexAnimation.STORAGE_AUTO if storage == "bones" else want))
		check_eq(models[-1].baked_storage, want, "%s bakes in %s storage" % [p, storage])
	var soldier := _skeletal("attack", 0.45)
	var a := await capture()
	soldier.queue_free()
	var actors := _soldier_actor(models, "attack", 0.45)
	var b := await capture()
	save_png(a, "equipment_skeletal_" + storage)
	save_png(b, "equipment_vat_" + storage)
	var d := image_diff(a, b)
	print("    equipment (%s): %d models, mean %.3f/255, %.4f%% over 32/255" % [storage, models.size(), d["mean_abs"], d["frac_over_32"] * 100.0])
	check(d["mean_abs"] <= 1.5, "equipment mean abs diff %.3f <= 1.5" % d["mean_abs"])
	check(d["frac_over_32"] <= 0.005, "equipment pixels off %.4f%% <= 0.5%%" % (d["frac_over_32"] * 100.0))
	# The same soldier through an equipment set (one call): the same picture, looks included.
	var clip := models[0].find_clip("attack")
	var all := PackedInt32Array(range(models.size()))
	var tints := PackedColorArray()
	for m in models.size():
		tints.append(Color(1.0, 0.3, 0.3) if m == 0 else Color(0.3, 0.3, 1.0))
	check(actors.set_equipment(0, all) and actors.set_equipment(1, all, PackedInt32Array(), tints),
			"equipment sets defined")
	actors.begin()
	actors.add_equipped_actor(Transform3D.IDENTITY, 0, clip, 0.0, 1.0, Color())
	actors.submit()
	var c := await capture()
	var same := image_diff(b, c)
	# Identical in Forward+ and Compatibility; in Mobile two frames of the same scene differ in a few pixels by a
	# step or two (mean 0.00003/255).
	print("    equipment set against add_model: mean %.5f/255, %.4f%% over 32/255" % [same["mean_abs"], same["frac_over_32"] * 100.0])
	check(same["mean_abs"] <= 0.01 and same["frac_over_32"] == 0.0,
			"equipped actor draws as add_model did (mean %.5f/255, %.4f%% over 32/255)" % [same["mean_abs"], same["frac_over_32"] * 100.0])
	actors.begin()
	actors.add_actor(Transform3D.IDENTITY, clip, 0.0, 1.0, Color())
	for m in models.size():
		actors.add_model(m, 0, tints[m])
	actors.submit()
	var tinted := await capture()
	actors.begin()
	actors.add_equipped_actor(Transform3D.IDENTITY, 1, clip, 0.0, 1.0, Color())
	actors.submit()
	var tinted_set := await capture()
	save_png(tinted_set, "equipment_set_tinted_" + storage)
	var tint_diff := image_diff(b, tinted)
	print("    tinted against untinted: mean %.3f/255, %.4f%% over 32/255" % [tint_diff["mean_abs"], tint_diff["frac_over_32"] * 100.0])
	check(tint_diff["frac_over_32"] > 0.0005, "the tint shows (%.4f%% of pixels off by > 32/255 from untinted)" % (tint_diff["frac_over_32"] * 100.0))
	var set_diff := image_diff(tinted, tinted_set)
	check(set_diff["mean_abs"] <= 0.01 and set_diff["frac_over_32"] == 0.0,
			"a tinted set draws as tinted add_model (mean %.5f/255, %.4f%% over 32/255)" % [set_diff["mean_abs"], set_diff["frac_over_32"] * 100.0])


## The baked whole soldier (every MeshInstance3D of its scene) as one VertexAnimation.
## Equipment in bone storage draws with the body's bone texture (`bone_source`): the sword and shield store none
## of their own, decode as their own bone bakes do, and the actor draws as Godot's skeleton does.
func test_equipment_shares_the_bodys_bone_texture() -> void:
	stage(Vector3(1.6, 1.4, -2.6), Vector3(0, 0.9, 0))
	var paths := _soldier_mesh_paths()
	var body := _bake([paths[0]])
	check_eq(body.baked_storage, VertexAnimation.STORAGE_BONES, "the body bakes in bone storage (Auto)")
	var models: Array[VertexAnimation] = [body]
	for p in paths.slice(1):
		var own := _bake([p])
		var worn := VertexAnimation.new()
		worn.source_scene = load(SOLDIER)
		worn.meshes = [NodePath(p)] as Array[NodePath]
		worn.precision = 1
		worn.storage = VertexAnimation.STORAGE_BONES
		worn.bone_source = body
		if not check_eq(worn.bake(), OK, "%s bakes on the body's bone texture" % p):
			return
		check(worn.bone_texture == null, "%s stores no bone texture of its own" % p)
		var stats := worn.get_bake_stats()
		check(stats["texture_bytes"] < own.get_bake_stats()["texture_bytes"], "%s stores fewer bytes (%d against %d)" % [
			p, stats["texture_bytes"], own.get_bake_stats()["texture_bytes"]])
		var diag := own.get_bounds().size.length()
		var worst := 0.0
		for c in own.get_clip_count():
			for f in own.get_clip_frame_count(c):
				var a := own.decode_frame(c, f)
				var b := worn.decode_frame(c, f)
				for i in a.size():
					worst = maxf(worst, a[i].distance_to(b[i]))
		print("    %s on the body's bones: %d texture bytes (own bone texture: %d), decoded at most %.6f of the diagonal from its own bake" % [
			p, stats["texture_bytes"], own.get_bake_stats()["texture_bytes"], worst / diag])
		check(worst <= 1e-3 * diag, "%s decodes as its own bake (%.6f of the diagonal)" % [p, worst / diag])
		models.append(worn)
	var soldier := _skeletal("attack", 0.45)
	var a := await capture()
	soldier.queue_free()
	var actors := _soldier_actor(models, "attack", 0.45)
	var b := await capture()
	save_png(b, "equipment_shared_bones_vat")
	var d := image_diff(a, b)
	print("    equipment on the body's bones: mean %.3f/255, %.4f%% over 32/255" % [d["mean_abs"], d["frac_over_32"] * 100.0])
	check(d["mean_abs"] <= 1.5, "mean abs diff %.3f <= 1.5" % d["mean_abs"])
	check(d["frac_over_32"] <= 0.005, "pixels off %.4f%% <= 0.5%%" % (d["frac_over_32"] * 100.0))
	actors.free()
	# What cannot share says so: an unbaked body, a body with other clips, itself.
	var sword := VertexAnimation.new()
	sword.source_scene = load(SOLDIER)
	sword.meshes = [NodePath(paths[1])] as Array[NodePath]
	sword.bone_source = VertexAnimation.new()
	check_eq(sword.bake(), FAILED, "an unbaked bone_source is refused")
	var other_clips := VertexAnimation.new()
	other_clips.source_scene = load(SOLDIER)
	other_clips.meshes = [NodePath(paths[0])] as Array[NodePath]
	other_clips.clips = PackedStringArray(["walk"])
	check_eq(other_clips.bake(), OK, "a body with one clip bakes")
	sword.bone_source = other_clips
	check_eq(sword.bake(), FAILED, "a bone_source with other clips is refused")
	sword.bone_source = sword
	check(sword.bone_source != sword, "a model cannot be its own bone_source")


## One paused actor at the origin wearing every model of `models` (the body first), in `clip` at time `t`.
func _soldier_actor(models: Array[VertexAnimation], clip: String, t: float) -> AnimatedActorMeshInstance:
	var actors := AnimatedActorMeshInstance.new()
	actors.models = models
	actors.paused = true
	root.add_child(actors)
	actors.time = t
	actors.begin()
	actors.add_actor(Transform3D.IDENTITY, models[0].find_clip(clip), 0.0)
	for m in models.size():
		actors.add_model(m)
	actors.submit()
	return actors


## Every MeshInstance3D of the soldier (body first), as paths from its root.
func _soldier_mesh_paths() -> Array:
	var full := (load(SOLDIER) as PackedScene).instantiate()
	var paths := []
	for mi in full.find_children("*", "MeshInstance3D", true, false):
		paths.append(full.get_path_to(mi))
	full.free()
	return paths


func _bake_whole_soldier() -> VertexAnimation:
	return _bake(_soldier_mesh_paths())


## An AnimatedActorMeshInstance of the one model `va`, with `options` (property: value) set.
func _actor_node(va: VertexAnimation, options := {}) -> AnimatedActorMeshInstance:
	var node := AnimatedActorMeshInstance.new()
	node.models = [va] as Array[VertexAnimation]
	for key: String in options:
		node.set(key, options[key])
	return node


## An AnimatedMeshInstance of `va`, with `options` (property: value) set.
func _retained_node(va: VertexAnimation, options := {}) -> AnimatedMeshInstance:
	var node := AnimatedMeshInstance.new()
	node.animation = va
	for key: String in options:
		node.set(key, options[key])
	return node


## Renders crowd node `node` paused at `time`: it joins the tree at time 0, `fill(node)` places
## its actors, then it submits at `time`; it leaves the tree after the capture.
func _render_node(node: Node3D, time: float, fill: Callable) -> Image:
	node.paused = true
	root.add_child(node)
	node.time = 0.0
	fill.call(node)
	node.time = time
	node.submit()
	var img := await capture()
	node.queue_free()
	await frames(1)
	return img


# full_transform: a soldier tilted, stretched unevenly and sheared by its node transform, drawn by
# its own scene and by one actor carrying that same transform: through each crowd node's
# per-actor and bulk calls.
func test_full_transform_matches_a_tilted_skeleton() -> void:
	stage(Vector3(1.8, 1.5, -2.8), Vector3(0, 0.8, 0))
	var va := _bake_whole_soldier()
	var walk := va.find_clip("walk")
	var basis := Basis(Vector3(1, 0, 0.4).normalized(), 0.45).scaled(Vector3(1.25, 0.8, 1.0))
	basis.x += basis.y * 0.15  # shear
	var xform := Transform3D(basis, Vector3(0.2, 0.35, -0.1))
	var soldier := _skeletal("walk", 0.3)
	soldier.transform = xform
	var a := await capture()
	soldier.queue_free()
	var full := {"full_transform": true}
	var immediate := func(n: AnimatedActorMeshInstance) -> void:
		n.begin()
		n.add_actor(xform, walk, 0.0)
		n.add_model(0)
	var b := await _render_node(_actor_node(va, full), 0.3, immediate)
	save_png(a, "full_transform_skeletal")
	save_png(b, "full_transform_vat")
	check_render_close("full transform, add_actor", a, b)
	var bulk := await _render_node(_actor_node(va, full), 0.3, func(n: AnimatedActorMeshInstance) -> void:
		n.set_actor_transforms(transform_rows([xform]), PackedInt32Array([walk]), PackedFloat32Array([0.0]))
		n.set_model_actors(0, PackedInt32Array([0])))
	check_render_close("full transform, set_actor_transforms", a, bulk)
	# The same transform without the option keeps only position, yaw and scale: visibly different.
	var c := await _render_node(_actor_node(va), 0.3, immediate)
	check(image_diff(a, c)["mean_abs"] > 3.0 * maxf(image_diff(a, b)["mean_abs"], 0.1), "yaw-only actors ignore the tilt")
	# The retained node with the same option.
	var e := await _render_node(_retained_node(va, full), 0.3, func(n: AnimatedMeshInstance) -> void:
		n.add_instance(xform, walk))
	check_render_close("full transform, AnimatedMeshInstance.add_instance", a, e)
	var f := await _render_node(_retained_node(va, full), 0.3, func(n: AnimatedMeshInstance) -> void:
		var id := n.add_instance(Transform3D.IDENTITY, walk)
		n.set_instance_transforms(transform_rows([xform]), id))
	check_render_close("full transform, AnimatedMeshInstance.set_instance_transforms", a, f)


# billboard: an actor with yaw 0 turns to face the camera, so it looks like the skeletal soldier
# turned by the camera's bearing; both crowd nodes.
func test_billboard_faces_the_camera() -> void:
	var cam_pos := Vector3(2.2, 1.3, -1.6)
	stage(cam_pos, Vector3(0, 0.8, 0))
	var va := _bake_whole_soldier()
	var idle := va.find_clip("idle")
	var soldier := _skeletal("idle", 0.4)
	soldier.rotation.y = atan2(cam_pos.x, cam_pos.z)
	var a := await capture()
	soldier.queue_free()
	var board := {"billboard": true}
	var b := await _render_node(_actor_node(va, board), 0.4, func(n: AnimatedActorMeshInstance) -> void:
		n.begin()
		n.add_actor(Transform3D.IDENTITY, idle, 0.0)
		n.add_model(0))
	var add_one := func(n: AnimatedMeshInstance) -> void:
		n.add_instance(Transform3D.IDENTITY, idle)
	var c := await _render_node(_retained_node(va, board), 0.4, add_one)
	var plain := await _render_node(_retained_node(va), 0.4, add_one)
	save_png(a, "billboard_skeletal")
	save_png(b, "billboard_vat")
	check_render_close("billboard, AnimatedActorMeshInstance", a, b)
	check_render_close("billboard, AnimatedMeshInstance", a, c)
	check(image_diff(a, plain)["mean_abs"] > 0.5, "without billboard the actor keeps its own yaw")


func _flat_material() -> ShaderMaterial:
	var sh := Shader.new()
	sh.code = """shader_type spatial;
render_mode unshaded;
#include "res://addons/vat_crowd/shaders/vat_crowd.gdshaderinc"
varying vec4 tint;
void vertex() { VatInstance inst = VAT_INSTANCE; vat_vertex(inst, CUSTOM0.x, VERTEX, NORMAL); tint = inst.tint; }
void fragment() { ALBEDO = tint.rgb; }
"""
	var m := ShaderMaterial.new()
	m.shader = sh
	return m


func test_ten_thousand_actors_counted_per_region() -> void:
	var cam := Camera3D.new()
	cam.projection = Camera3D.PROJECTION_ORTHOGONAL
	cam.size = 110.0
	root.add_child(cam)
	cam.look_at_from_position(Vector3(0, 100, 0), Vector3.ZERO, Vector3.FORWARD)
	cam.current = true
	var body := _bake(["Skeleton/Body"])
	var actors := AnimatedActorMeshInstance.new()
	actors.models = [body] as Array[VertexAnimation]
	actors.material_overrides = [_flat_material()] as Array[Material]
	actors.paused = true
	root.add_child(actors)
	actors.begin()
	var colors := [Color.RED, Color.GREEN, Color.BLUE, Color.YELLOW]
	var expected := [0, 0, 0, 0]
	for i in 100:
		for j in 100:
			var quadrant := (1 if i >= 50 else 0) + (2 if j >= 50 else 0)
			# The bottom-right quadrant gets a hole so a wrong count would show.
			if quadrant == 3 and i >= 75 and j >= 75:
				continue
			actors.add_actor(Transform3D(Basis.IDENTITY, Vector3(i - 49.5, 0, j - 49.5)), 0, 0.0)
			actors.add_model(0, 0, colors[quadrant])
			expected[quadrant] += 1
	actors.submit()
	check_eq(actors.get_actor_count(), 10000 - 625, "actors added")
	var img := await capture()
	save_png(img, "scale_10k")
	var counts := [0, 0, 0, 0]
	for y in img.get_height():
		for x in img.get_width():
			var c := img.get_pixel(x, y)
			for q in 4:
				if c.is_equal_approx(colors[q]) or (absf(c.r - colors[q].r) + absf(c.g - colors[q].g) + absf(c.b - colors[q].b)) < 0.1:
					counts[q] += 1
	# Quadrants of equal actor counts cover about equal pixel areas; the one with a hole, 3/4.
	print("    pixels per quadrant: ", counts, " actors: ", expected)
	for q in 3:
		check(counts[q] > 0, "quadrant %d drawn" % q)
	check(absf(float(counts[1]) / counts[0] - 1.0) < 0.1, "quadrants 0 and 1 cover equal areas")
	check(absf(float(counts[2]) / counts[0] - 1.0) < 0.1, "quadrants 0 and 2 cover equal areas")
	check(absf(float(counts[3]) / counts[0] - 0.75) < 0.1, "quadrant 3 (a quarter missing) covers 3/4 of the area")


# Bulk calls repeated frame after frame: a list equal to last frame's is not uploaded again, so
# check that every real change (which actors carry the model, their tint) still reaches the screen.
func test_bulk_updates_follow_changes() -> void:
	stage(Vector3(0, 1.5, 4.5), Vector3(0, 0.8, 0))  # +x to the right
	var actors := _actor_node(_bake(["Skeleton/Body"]))
	actors.material_overrides = [_flat_material()] as Array[Material]
	actors.paused = true
	root.add_child(actors)
	var positions := PackedVector3Array([Vector3(-1, 0, 0), Vector3(1, 0, 0)])
	var yaws := PackedFloat32Array([0.0, 0.0])
	var shots := []
	for step in [[0, Color.RED], [0, Color.RED], [1, Color.RED], [1, Color.BLUE]]:
		actors.set_actors(positions, yaws, PackedInt32Array(), PackedFloat32Array())
		actors.set_model_actors(0, PackedInt32Array([step[0]]), 0, step[1])
		actors.submit()
		shots.append(await capture())
	actors.queue_free()
	await frames(1)
	for i in shots.size():
		save_png(shots[i], "bulk_updates_%d" % i)
	var w: int = shots[0].get_width()
	var red_left := _count_near(shots[0], Color.RED, 0, w / 2)
	check(red_left > 100 and _count_near(shots[0], Color.RED, w / 2, w) == 0, "frame 0: the left actor drawn red (%d px)" % red_left)
	check_eq(image_diff(shots[0], shots[1])["mean_abs"], 0.0, "frame 1 (same lists) looks the same")
	check(_count_near(shots[2], Color.RED, 0, w / 2) == 0 and _count_near(shots[2], Color.RED, w / 2, w) > 100,
		"frame 2: the model moved to the right actor")
	check(_count_near(shots[3], Color.RED, 0, w) == 0 and _count_near(shots[3], Color.BLUE, w / 2, w) > 100,
		"frame 3: the new tint is drawn")
	# Two looks on one model in bulk: set_model_actors for one team, add_model_actors for the other.
	var teams := _actor_node(_bake(["Skeleton/Body"]))
	teams.material_overrides = [_flat_material()] as Array[Material]
	var two := await _render_node(teams, 0.0, func(n: AnimatedActorMeshInstance) -> void:
		n.set_actors(positions, yaws, PackedInt32Array(), PackedFloat32Array())
		n.set_model_actors(0, PackedInt32Array([0]), 0, Color.RED)
		n.add_model_actors(0, PackedInt32Array([1]), 0, Color.BLUE))
	save_png(two, "bulk_updates_two_looks")
	check(_count_near(two, Color.RED, 0, w / 2) > 100 and _count_near(two, Color.BLUE, w / 2, w) > 100
		and _count_near(two, Color.RED, w / 2, w) == 0 and _count_near(two, Color.BLUE, 0, w / 2) == 0,
		"add_model_actors: the left actor red, the right one blue")


# A moving crowd large enough that a few clip changes go up as recent states (one small layer)
# instead of the whole state texture: what it draws must match a fresh crowd given the same
# placements and clips at once (which reads every state from the state texture), frame after
# frame, and the bytes must show the cheap path was taken.
func test_clip_changes_in_a_moving_crowd_match_a_fresh_crowd() -> void:
	stage(Vector3(0, 1.6, 6.0), Vector3(0, 0.8, 0))
	var va := _bake(["Skeleton/Body"])
	var walk := va.find_clip("walk")
	var attack := va.find_clip("attack")
	var idle := va.find_clip("idle")
	# Five actors in view, the other 7,995 far behind the camera (culled, but they move too).
	var n := 8000
	var positions := PackedVector3Array()
	var yaws := PackedFloat32Array()
	var clips := PackedInt32Array()
	var starts := PackedFloat32Array()
	for i in n:
		positions.append(Vector3(-2.4 + 1.2 * i, 0, 0) if i < 5 else Vector3(i % 100, 0, 200 + i / 100))
		yaws.append(0.3 * i)
		clips.append(walk)
		starts.append(0.0)
	var crowd := _actor_node(va)
	crowd.paused = true
	root.add_child(crowd)
	crowd.time = 1.0
	crowd.set_actors(positions, yaws, clips, starts)
	crowd.set_model_actors(0, PackedInt32Array(range(n)))
	crowd.submit()
	var first := await capture()
	# Each frame every actor steps and turns; some change clips (actor 1 twice).
	var changes := [[[1, 3], [attack, idle]], [[1, 4, 2000], [idle, attack, idle]], [[], []]]
	var bytes := []
	var shots := []
	var fresh := []
	for step in changes.size():
		var ids := PackedInt32Array(changes[step][0])
		var new_clips := PackedInt32Array(changes[step][1])
		var new_starts := PackedFloat32Array()
		for k in ids.size():
			new_starts.append(0.45 + 0.1 * step)
			clips[ids[k]] = new_clips[k]
			starts[ids[k]] = new_starts[k]
		var placements := PackedVector4Array()
		for i in n:
			positions[i] += Vector3(0, 0, -0.05)
			yaws[i] += 0.2
			placements.append(Vector4(positions[i].x, positions[i].y, positions[i].z, yaws[i]))
		crowd.set_actor_placements(placements)
		if not ids.is_empty():
			crowd.set_actor_clips(ids, new_clips, new_starts)
		crowd.submit()
		bytes.append(crowd.get_last_submit_bytes())
		shots.append(await capture())
		fresh.append(await _render_node(_actor_node(va), 1.0, func(f: AnimatedActorMeshInstance) -> void:
			f.set_actors(positions, yaws, clips, starts)
			f.set_model_actors(0, PackedInt32Array(range(n)))))
	# Every clip changing at once, nobody moving: the state texture goes up whole.
	var all_idle := PackedInt32Array()
	all_idle.resize(n)
	all_idle.fill(idle)
	var all_starts := PackedFloat32Array()
	all_starts.resize(n)
	all_starts.fill(0.7)
	crowd.set_actors(positions, yaws, all_idle, all_starts)
	crowd.submit()
	var all_bytes := crowd.get_last_submit_bytes()
	crowd.queue_free()
	await frames(1)
	print("    bytes per submit: changes %s, all clips %d" % [str(bytes), all_bytes])
	# The moving-only frame sends the placements; the others one 64 KiB layer more, except that
	# the first use makes the recent-state texture: 2 layers for 8,000 actors (128 KiB, no more
	# than their state texture).
	var layer := 4096 * 16
	check_eq(bytes[0], bytes[2] + 2 * layer, "the first clip changes make the recent-state texture")
	check_eq(bytes[1], bytes[2] + layer, "three more changes (one actor again) cost one layer")
	check(bytes[1] < bytes[2] + n * 16, "less than the whole state texture")
	check(all_bytes >= bytes[2] + n * 16, "every clip changing sends every state (%d bytes)" % all_bytes)
	for step in shots.size():
		save_png(shots[step], "recent_states_%d" % step)
		save_png(fresh[step], "recent_states_%d_fresh" % step)
		var d := image_diff(shots[step], fresh[step])
		print("    frame %d vs a fresh crowd: mean %.4f/255, %.5f%% over 32/255" % [step, d["mean_abs"], d["frac_over_32"] * 100.0])
		check(d["mean_abs"] <= 0.02 and d["frac_over_32"] <= 0.0001, "frame %d matches a fresh crowd" % step)
	var changed := image_diff(first, shots[0])
	check(changed["frac_over_32"] > 0.002, "the changes show (%.3f%% of pixels; the test can fail)" % (changed["frac_over_32"] * 100.0))


## Pixels of `img` within 0.1 of `color` (summed over r, g, b) in columns `x0..x1`.
func _count_near(img: Image, color: Color, x0: int, x1: int) -> int:
	var n := 0
	for y in img.get_height():
		for x in range(x0, x1):
			var c := img.get_pixel(x, y)
			if absf(c.r - color.r) + absf(c.g - color.g) + absf(c.b - color.b) < 0.1:
				n += 1
	return n


# AnimatedMeshInstance with a look per instance (runs of equal looks and single ones), then a
# removal and a tint change: each colour is drawn by as many instances as carry it, in place.
func test_retained_looks_follow_instances() -> void:
	stage(Vector3(0, 1.5, 7.5), Vector3(0, 0.8, 0))  # +x to the right
	var crowd := _retained_node(_bake(["Skeleton/Body"]))
	crowd.material_override = _flat_material()
	crowd.auto_submit = false
	crowd.paused = true
	root.add_child(crowd)
	var tints := [Color.RED, Color.RED, Color.BLUE, Color.GREEN]
	var ids := []
	for i in tints.size():
		ids.append(crowd.add_instance(Transform3D(Basis.IDENTITY, Vector3(-3 + 2 * i, 0, 0)), 0, tints[i]))
	crowd.submit()
	var before := await capture()
	crowd.remove_instance(ids[0])
	crowd.set_instance_tint(ids[3], Color.RED)
	crowd.submit()
	var after := await capture()
	crowd.queue_free()
	await frames(1)
	save_png(before, "retained_looks_before")
	save_png(after, "retained_looks_after")
	var w: int = before.get_width()
	var red := _count_near(before, Color.RED, 0, w)
	var blue := _count_near(before, Color.BLUE, 0, w)
	var green := _count_near(before, Color.GREEN, 0, w)
	print("    retained looks: red %d, blue %d, green %d px; after: red %d, blue %d, green %d px" % [
		red, blue, green, _count_near(after, Color.RED, 0, w), _count_near(after, Color.BLUE, 0, w),
		_count_near(after, Color.GREEN, 0, w)])
	check(blue > 100 and green > 100 and absf(float(red) / blue - 2.0) < 0.3, "two red, one blue, one green")
	check(_count_near(before, Color.RED, w / 2, w) == 0 and _count_near(before, Color.GREEN, 0, w / 2) == 0,
		"red on the left, green on the right")
	check(_count_near(after, Color.GREEN, 0, w) == 0, "the green instance turned red")
	check(absf(float(_count_near(after, Color.RED, 0, w)) / _count_near(after, Color.BLUE, 0, w) - 2.0) < 0.3,
		"after removing one red and re-tinting the green: two red, one blue")
	check(_count_near(after, Color.RED, w / 2, w) > 100, "the re-tinted instance stays on the right")


# AnimatedMeshInstance re-packs only the slots written since the last submit: after moves, a new
# clip, a new tint, a removal (the last slot moves into the hole) and an addition, it must look
# exactly like a crowd built in that final state from scratch.
func test_retained_partial_updates_match_a_fresh_crowd() -> void:
	stage(Vector3(0.5, 3.0, 9.0), Vector3(0.5, 0.5, -1.5))
	var va := _bake(["Skeleton/Body"])
	var clips := [va.find_clip("walk"), va.find_clip("idle"), va.find_clip("attack")]
	var at := func(i: int, yaw := 0.0) -> Transform3D:
		return Transform3D(Basis(Vector3.UP, yaw), Vector3(-5.0 + 2.0 * (i % 6), 0, -3.0 * (i / 6)))
	# Twelve instances, so that the five changes below stay under half the crowd (the partial path).
	var entries := []
	for i in 12:
		entries.append({"xform": at.call(i), "clip": clips[i % 3], "tint": Color.WHITE, "start": 0.0})
	var a := _retained_node(va)
	a.auto_submit = false
	a.paused = true
	root.add_child(a)
	a.time = 0.0
	var ids := []
	for e in entries:
		ids.append(a.add_instance(e.xform, e.clip, e.tint))
	a.submit()
	var first := await capture()
	a.time = 0.3
	a.set_instance_transform(ids[2], at.call(2, 1.2))
	entries[2].xform = at.call(2, 1.2)
	a.play_animation(ids[4], clips[2])
	entries[4].clip = clips[2]
	entries[4].start = 0.3
	a.set_instance_tint(ids[7], Color(1.0, 0.3, 0.3))
	entries[7].tint = Color(1.0, 0.3, 0.3)
	a.remove_instance(ids[0])  # the last slot moves into slot 0
	entries[0] = null
	var extra := Transform3D(Basis.IDENTITY, Vector3(7.0, 0, -3.0))
	a.add_instance(extra, clips[1], Color(0.3, 0.3, 1.0))
	entries.append({"xform": extra, "clip": clips[1], "tint": Color(0.3, 0.3, 1.0), "start": 0.3})
	a.time = 0.6
	a.submit()
	var updated := await capture()
	a.queue_free()
	await frames(1)
	var b := _retained_node(va)
	b.auto_submit = false
	b.paused = true
	root.add_child(b)
	for e in entries:
		if e != null:
			b.time = e.start
			b.add_instance(e.xform, e.clip, e.tint)
	b.time = 0.6
	b.submit()
	var fresh := await capture()
	b.queue_free()
	await frames(1)
	save_png(updated, "retained_partial_updated")
	save_png(fresh, "retained_partial_fresh")
	var d := image_diff(updated, fresh)
	print("    partial updates vs fresh crowd: mean %.3f/255, %.4f%% over 32/255" % [d["mean_abs"], d["frac_over_32"] * 100.0])
	check(d["mean_abs"] <= 0.05 and d["frac_over_32"] <= 0.0005, "partially updated crowd matches a fresh one")
	var moved := image_diff(first, updated)
	check(moved["frac_over_32"] > 0.005, "the updates changed the picture (%.3f%% of pixels; the test can fail)" % (moved["frac_over_32"] * 100.0))


func _render_crowd(va: VertexAnimation, start: float, t: float, first_clip: String, then_clip := "", blend := 0.0) -> Image:
	# One soldier playing `first_clip` from `start`; if `then_clip` is given it switches to it
	# 0.2 s later with a cross-fade of `blend` seconds. Rendered at crowd time `t`.
	var fill := func(n: AnimatedMeshInstance) -> void:
		n.time = start
		var id := n.add_instance(Transform3D.IDENTITY, va.find_clip(first_clip))
		if then_clip != "":
			n.time = start + 0.2
			n.play_animation(id, va.find_clip(then_clip), blend)
	return await _render_node(_retained_node(va), t, fill)


func cases_long_play_matches_early_play() -> Array:
	return _storages()


func test_each_long_play_matches_early_play(storage: String) -> void:
	stage(Vector3(1.6, 1.4, -2.6), Vector3(0, 0.9, 0))
	var va := _body_in(storage)
	var early := await _render_crowd(va, 0.0, 0.37, "walk")
	var late := await _render_crowd(va, 86400.0, 86400.37, "walk")
	save_png(late, "long_play_86400_" + storage)
	var d := image_diff(early, late)
	print("    long play: mean %s, over 32: %s" % [d["mean_abs"], d["frac_over_32"]])
	check(d["frac_over_32"] <= 0.0005 and d["mean_abs"] <= 0.1, "pose at time 86400 matches the pose near 0 (mean %s)" % d["mean_abs"])
	var other := await _render_crowd(va, 0.0, 0.62, "walk")
	check(image_diff(early, other)["frac_over_32"] > 0.002, "a different time looks different (the test can fail)")


func cases_crossfade_lies_between_poses() -> Array:
	return _storages()


func test_each_crossfade_lies_between_poses(storage: String) -> void:
	stage(Vector3(1.6, 1.4, -2.6), Vector3(0, 0.9, 0))
	var va := _body_in(storage)
	# Walk from 0, switching to attack at 0.2 with a 0.4 s blend: at 0.4 it is half way.
	var walk := await _render_crowd(va, 0.0, 0.4, "walk")
	var mid := await _render_crowd(va, 0.0, 0.4, "walk", "attack", 0.4)
	var attack := await _render_crowd(va, 0.0, 0.4, "walk", "attack", 0.0)
	save_png(mid, "crossfade_mid_" + storage)
	var wa: float = image_diff(walk, attack)["mean_abs"]
	var wm: float = image_diff(walk, mid)["mean_abs"]
	var ma: float = image_diff(mid, attack)["mean_abs"]
	print("    crossfade: walk-attack %s, walk-mid %s, mid-attack %s" % [wa, wm, ma])
	check(wm > 0.05 and ma > 0.05, "mid-blend differs from both poses")
	check(wm < wa and ma < wa, "mid-blend lies between the two poses")
	# The same fade on AnimatedActorMeshInstance, per actor and in bulk: attack from 0.2, fading
	# from walk (played since 0) over 0.4 s.
	var attack_clip := va.find_clip("attack")
	var walk_clip := va.find_clip("walk")
	var one := func(n: AnimatedActorMeshInstance) -> void:
		n.begin()
		n.add_actor(Transform3D.IDENTITY, attack_clip, 0.2)
		n.add_model(0)
		n.set_actor_blend(0, walk_clip, 0.0, 0.4)
	var bulk := func(n: AnimatedActorMeshInstance) -> void:
		n.set_actors(PackedVector3Array([Vector3.ZERO]), PackedFloat32Array([0.0]),
			PackedInt32Array([attack_clip]), PackedFloat32Array([0.2]))
		n.set_actor_blends(PackedInt32Array([0]), PackedInt32Array([walk_clip]),
			PackedFloat32Array([0.0]), PackedFloat32Array([0.4]))
		n.set_model_actors(0, PackedInt32Array([0]))
	# The same fade eleven days into play: set_actor_blend takes its previous start time in double
	# precision (as f32, 1000000.03 would be 30 ms off).
	var day := 1000000.03
	var late := func(n: AnimatedActorMeshInstance) -> void:
		n.time = day  # the clock is there when the game adds the actor
		n.begin()
		n.add_actor(Transform3D.IDENTITY, attack_clip, day + 0.2)
		n.add_model(0)
		n.set_actor_blend(0, walk_clip, day, 0.4)
	var late_img := await _render_node(_actor_node(va), day + 0.4, late)
	var dl: float = image_diff(mid, late_img)["mean_abs"]
	print("    crossfade at time %.2f: mean %.3f/255 from the one near 0" % [day, dl])
	check(dl <= 0.1 * wm, "a fade after eleven days of play looks like one near 0 (%.3f)" % dl)
	for entry in [["set_actor_blend", one], ["set_actor_blends", bulk]]:
		var img := await _render_node(_actor_node(va), 0.4, entry[1])
		var d: float = image_diff(mid, img)["mean_abs"]
		print("    crossfade through %s: mean %.3f/255 from AnimatedMeshInstance's" % [entry[0], d])
		check(d <= 0.1 * wm, "%s gives the same mid-blend pose (%.3f)" % [entry[0], d])


func _ground_brightness(img: Image) -> float:
	# Mean brightness of the middle of the picture, where the crowd and its shadows are.
	var sum := 0.0
	var n := 0
	for y in range(img.get_height() / 3, img.get_height() * 2 / 3, 2):
		for x in range(0, img.get_width(), 2):
			sum += img.get_pixel(x, y).get_luminance()
			n += 1
	return sum / n


func test_crowd_casts_animated_shadows() -> void:
	stage(Vector3(0, 9, 9), Vector3(0, 0, 0), true)
	var ground := MeshInstance3D.new()
	var plane := PlaneMesh.new()
	plane.size = Vector2(40, 40)
	ground.mesh = plane
	root.add_child(ground)
	var va := _bake(["Skeleton/Body"])
	var crowd := AnimatedMeshInstance.new()
	crowd.animation = va
	crowd.paused = true
	root.add_child(crowd)
	crowd.time = 0.0
	for i in 5:
		for j in 3:
			crowd.add_instance(Transform3D(Basis.IDENTITY, Vector3(i * 1.5 - 3.0, 0, j * 1.5 - 1.0)), va.find_clip("attack"))
	crowd.time = 0.1
	crowd.submit()
	var lit_a := await capture()
	crowd.time = 0.5
	crowd.submit()
	var lit_b := await capture()
	# The same crowd again, casting no shadows.
	crowd.cast_shadow = 0
	crowd.submit()
	await frames(1)
	var unlit := await capture()
	save_png(lit_a, "shadows_a")
	save_png(lit_b, "shadows_b")
	save_png(unlit, "shadows_off")
	var with_shadows := _ground_brightness(lit_b)
	var without := _ground_brightness(unlit)
	print("    ground brightness with shadows %s, without %s" % [with_shadows, without])
	check(with_shadows < without - 0.005, "the crowd darkens the ground with its shadows")
	check(image_diff(lit_a, lit_b)["frac_over_32"] > 0.001, "shadows move with the animation")
