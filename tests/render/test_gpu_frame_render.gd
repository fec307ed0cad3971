# The GPU-driven crowd frame (gpu_driven, the default in Forward+ and Mobile) against the CPU
# frame (gpu_driven off), which the unit tests hold to the engine-free crowd frame: the same
# picture and, once the counters are read back, the same counts. Runs in every renderer (see
# RENDERER_PASS_TESTS in xtask): in Compatibility the GPU frame is inactive and both are the CPU
# frame.
extends VatTest


## The soldier with three levels of detail (its default bake: LOD on), baked once per script.
var _lod_soldier: VertexAnimation


func _soldier_lod() -> VertexAnimation:
	if _lod_soldier == null:
		var va := VertexAnimation.new()
		va.source_scene = load("res://generated/soldier.tscn")
		va.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
		va.bake()
		_lod_soldier = va
	return _lod_soldier


## True where the GPU frame should run (Forward+ and Mobile).
func _gpu_renderer() -> bool:
	return RenderingServer.get_rendering_device() != null


## Draws the crowd `setup` makes (given gpu_driven) with gpu_driven on and then off (each waiting `settle` frames for
## the read-back), and checks that the pictures and the per-(model, level) counts agree.
func _compare(label: String, setup: Callable, settle := 6) -> Dictionary:
	var images := {}
	var counts := {}
	for driven in [true, false]:
		var crowd: AnimatedActorMeshInstance = setup.call(driven)
		root.add_child(crowd)
		await frames(settle)
		images[driven] = await capture()
		await frames(2)
		if driven:
			check_eq(crowd.is_gpu_driven_active(), _gpu_renderer(), "%s: the GPU frame runs where the renderer has compute" % label)
		else:
			check(not crowd.is_gpu_driven_active(), "%s: gpu_driven off runs the CPU frame" % label)
		var c := []
		for m in crowd.models.size():
			for lod in 4:
				c.append([crowd.get_lod_instance_count(m, lod), crowd.get_lod_instance_count(m, lod, true)])
		counts[driven] = {"lods": crowd.get_lod_counts(), "slots": c, "vertices": crowd.get_drawn_vertex_count()}
		root.remove_child(crowd)
		crowd.free()
		await frames(1)
	save_png(images[true], "gpu_frame_%s_gpu" % label)
	save_png(images[false], "gpu_frame_%s_cpu" % label)
	var d := image_diff(images[true], images[false])
	print("    %s: mean %.4f/255, %.5f%% over 32/255; counts gpu %s cpu %s" % [label, d["mean_abs"], d["frac_over_32"] * 100.0, counts[true]["lods"], counts[false]["lods"]])
	check(d["mean_abs"] <= 0.01, "%s: the GPU frame draws the CPU frame's picture (mean %.4f/255)" % [label, d["mean_abs"]])
	check_eq(counts[true]["lods"], counts[false]["lods"], "%s: actors per level" % label)
	check_eq(counts[true]["vertices"], counts[false]["vertices"], "%s: drawn vertices" % label)
	var view_slots := func(c: Array) -> Array: return c.map(func(x): return x[0])
	check_eq(view_slots.call(counts[true]["slots"]), view_slots.call(counts[false]["slots"]), "%s: instances per model and level" % label)
	return counts


## A grid of `n` x `n` soldiers `spacing` apart, from `origin`, each with its body (drawn with
## `material`, if given), each with its own custom data.
func _grid(va: VertexAnimation, n: int, spacing: float, origin := Vector3.ZERO, material: Material = null) -> Callable:
	return func(driven: bool) -> AnimatedActorMeshInstance:
		var crowd := AnimatedActorMeshInstance.new()
		crowd.gpu_driven = driven
		crowd.models = [va] as Array[VertexAnimation]
		if material != null:
			crowd.material_overrides = [material] as Array[Material]
		crowd.paused = true
		crowd.begin()
		for i in n:
			for j in n:
				var p := origin + Vector3(i * spacing, 0, -j * spacing)
				crowd.add_actor(Transform3D(Basis(Vector3.UP, 0.0), p), 0, 0.1 * i, 1.0, Color(0.1 * i, 0.1 * j, 0.3, 1.0))
				crowd.add_model(0, 0, Color.WHITE)
		crowd.submit()
		return crowd


func test_culling_with_actors_half_in_view() -> void:
	stage(Vector3(0, 3, 6), Vector3(0, 1, -4))
	await _compare("half_in_view", _grid(soldier_body(), 12, 1.6, Vector3(-9.0, 0, 0)))


func test_lod_bands_from_10_to_300_m() -> void:
	stage(Vector3(0, 4, 0), Vector3(0, 2, -40))
	var va := _soldier_lod()
	check(va.get_lod_count() >= 2, "the default bake has levels to pick")
	var counts := await _compare("lod_bands", _grid(va, 30, 10.0, Vector3(-150.0, 0, -10.0)))
	check(counts[false]["lods"].size() >= 2 and counts[false]["lods"][1] > 0, "the scene spans more than one level")


func test_empty_and_single_crowds() -> void:
	stage(Vector3(0, 2, 5), Vector3(0, 1, 0))
	await _compare("empty", _grid(soldier_body(), 0, 1.0))
	await _compare("single", _grid(soldier_body(), 1, 1.0))


## Every mesh of the soldier (body, sword, shield...) baked as its own model, once per script.
var _equipment: Array[VertexAnimation] = []


func _soldier_models() -> Array[VertexAnimation]:
	if _equipment.is_empty():
		var scene: PackedScene = load("res://generated/soldier.tscn")
		var full := scene.instantiate()
		for mi in full.find_children("*", "MeshInstance3D", true, false):
			var va := VertexAnimation.new()
			va.source_scene = scene
			va.meshes = [full.get_path_to(mi)] as Array[NodePath]
			va.bake()
			_equipment.append(va)
		full.free()
	return _equipment


func test_crossfades_equipment_and_custom_data() -> void:
	stage(Vector3(0, 3, 7), Vector3(0, 1, -3), true)
	var models := _soldier_models()
	check(models.size() >= 2, "the soldier has equipment to carry")
	var attack := models[0].find_clip("attack")
	var walk := models[0].find_clip("walk")
	var setup := func(driven: bool) -> AnimatedActorMeshInstance:
		var crowd := AnimatedActorMeshInstance.new()
		crowd.gpu_driven = driven
		crowd.models = models
		crowd.paused = true
		crowd.time = 0.4
		crowd.set_equipment(0, PackedInt32Array(range(models.size())))
		crowd.begin()
		var ids := PackedInt32Array()
		for i in 8:
			for j in 6:
				var xf := Transform3D(Basis(Vector3.UP, 0.5 * i), Vector3(i * 1.5 - 5.0, 0, -j * 1.5))
				var id: int
				if (i + j) % 2 == 0:
					id = crowd.add_equipped_actor(xf, 0, attack, 0.2, 1.0, Color(0.2 * i, 0.1 * j, 0.5, 1.0))
				else:
					id = crowd.add_actor(xf, walk, 0.0, 1.0, Color(0, 0, 0, 0))
					crowd.add_model(0, 0, Color(1.0, 0.6, 0.6))
				if i % 3 == 0:
					ids.append(id)
		crowd.submit()
		# A third of them fade in from walk over a second (half way at t = 0.4 + 0.2).
		for id in ids:
			crowd.set_actor_blend(id, walk, 0.0, 1.0)
		crowd.submit()
		return crowd
	await _compare("crossfade_equipment", setup)


## Actors outside the view on the sun's side cast shadows into it: the GPU frame keeps them for
## their shadows as the CPU frame does.
func test_shadows_cast_into_the_view_from_outside() -> void:
	stage(Vector3(0, 14, 0.5), Vector3.ZERO, true)
	var ground := MeshInstance3D.new()
	var plane := PlaneMesh.new()
	plane.size = Vector2(300, 300)
	ground.mesh = plane
	root.add_child(ground)
	var sun: DirectionalLight3D = root.get_children().filter(func(n): return n is DirectionalLight3D)[0]
	var travel := -sun.global_basis.z.normalized()
	var toward_sun := -Vector3(travel.x, 0, travel.z).normalized()
	var setup := func(driven: bool) -> AnimatedActorMeshInstance:
		var crowd := AnimatedActorMeshInstance.new()
		crowd.gpu_driven = driven
		crowd.models = [soldier_body()] as Array[VertexAnimation]
		crowd.paused = true
		crowd.begin()
		for k in 40:
			# A line from the middle out past the view's edge on the sun's side, tall ones outside.
			var p := toward_sun * (k * 0.8) + Vector3(k % 3, 0, 0)
			var s := 1.0 if k < 14 else 4.0
			crowd.add_actor(Transform3D(Basis.IDENTITY.scaled(Vector3.ONE * s), p), 0, 0.0, 1.0)
			crowd.add_model(0, 0, Color.WHITE)
		crowd.submit()
		return crowd
	var counts := await _compare("shadows_from_outside", setup)
	# The CPU frame's shadow list holds the actors outside the view kept for their shadows (every
	# actor here is within the sun's reach, so it does not split); the GPU frame's holds every
	# caster, those in the view too.
	var outside := 0
	var casters := 0
	for k in counts[false]["slots"].size():
		outside += counts[false]["slots"][k][1]
		casters += counts[true]["slots"][k][1]
	print("    %d actors in view, %d kept outside for their shadows; the GPU frame's shadow lists: %d" % [counts[false]["lods"][0], outside, casters])
	check(outside > 0, "some actors outside the view are kept for their shadows (the test can fail)")
	if _gpu_renderer():
		check_eq(casters, outside + counts[false]["lods"][0], "the GPU frame's shadow lists hold every caster")


## Actors added and removed between frames, then the node moved under another parent: the GPU
## frame follows each change as the CPU frame does.
func test_changes_between_frames_and_a_reparented_node() -> void:
	stage(Vector3(0, 3, 7), Vector3(0, 1, -3))
	var va := soldier_body()
	var images := {}
	for driven in [true, false]:
		var crowd := AnimatedActorMeshInstance.new()
		crowd.gpu_driven = driven
		crowd.models = [va] as Array[VertexAnimation]
		crowd.paused = true
		var holder := Node3D.new()
		root.add_child(holder)
		holder.add_child(crowd)
		var shots := []
		for step in 3:
			var n: int = [30, 5, 60][step]
			crowd.begin()
			for i in n:
				crowd.add_actor(Transform3D(Basis.IDENTITY, Vector3((i % 10) * 1.2 - 5.4, 0, -(i / 10) * 1.5)), 0, 0.0, 1.0)
				crowd.add_model(0, 0, Color.WHITE)
			crowd.submit()
			await frames(4)
			shots.append(await capture())
		var other := Node3D.new()
		other.position = Vector3(1.5, 0, -2.0)
		root.add_child(other)
		crowd.reparent(other, false)
		await frames(4)
		shots.append(await capture())
		await frames(2)
		shots.append(crowd.get_lod_counts())
		images[driven] = shots
		holder.queue_free()
		other.queue_free()
		await frames(2)
	for k in 4:
		var d := image_diff(images[true][k], images[false][k])
		print("    change %d: mean %.4f/255" % [k, d["mean_abs"]])
		check(d["mean_abs"] <= 0.01, "change %d: the GPU frame draws the CPU frame's picture" % k)
	check_eq(images[true][4], images[false][4], "after the reparenting: actors per level")


## The retained node draws through the same GPU frame.
func test_retained_node() -> void:
	stage(Vector3(0, 3, 7), Vector3(0, 1, -3))
	var images := {}
	for driven in [true, false]:
		var node := AnimatedMeshInstance.new()
		node.gpu_driven = driven
		node.animation = soldier_body()
		node.paused = true
		root.add_child(node)
		for i in 40:
			node.add_instance(Transform3D(Basis(Vector3.UP, i * 0.3), Vector3((i % 8) * 1.3 - 5.0, 0, -(i / 8) * 1.6)), 0, Color.WHITE, 0)
		await frames(5)
		images[driven] = await capture()
		check_eq(node.is_gpu_driven_active(), driven and _gpu_renderer(), "retained: gpu_driven %s" % driven)
		node.queue_free()
		await frames(2)
	var d := image_diff(images[true], images[false])
	print("    retained: mean %.4f/255" % d["mean_abs"])
	check(d["mean_abs"] <= 0.01, "retained: the GPU frame draws the CPU frame's picture")


func _custom_material(lookup: String) -> ShaderMaterial:
	var sh := Shader.new()
	sh.code = """shader_type spatial;
#include "res://addons/vat_crowd/shaders/vat_crowd.gdshaderinc"
varying vec4 tint;
varying vec4 custom;
void vertex() { VatInstance inst = %s; vat_vertex(inst, VAT_COLUMN, VERTEX, NORMAL); tint = inst.tint; custom = inst.custom; }
void fragment() { ALBEDO = tint.rgb * 0.6 + custom.rgb * 0.4; }
""" % lookup
	var m := ShaderMaterial.new()
	m.shader = sh
	return m


## A material_override that reads instances through VAT_INSTANCE is drawn by the GPU frame; one
## written for the CPU frame alone (vat_instance(INSTANCE_ID)) keeps the CPU frame and still draws.
func test_custom_shaders_with_either_lookup() -> void:
	stage(Vector3(0, 3, 7), Vector3(0, 1, -3))
	var shots := {}
	for lookup in ["VAT_INSTANCE", "vat_instance(INSTANCE_ID)"]:
		var crowd: AnimatedActorMeshInstance = _grid(soldier_body(), 6, 1.5, Vector3(-4, 0, 0), _custom_material(lookup)).call(true)
		root.add_child(crowd)
		await frames(5)
		shots[lookup] = await capture()
		var expected: bool = _gpu_renderer() and lookup == "VAT_INSTANCE"
		check_eq(crowd.is_gpu_driven_active(), expected, "%s: the GPU frame draws it: %s" % [lookup, expected])
		crowd.queue_free()
		await frames(2)
	var d := image_diff(shots["VAT_INSTANCE"], shots["vat_instance(INSTANCE_ID)"])
	print("    VAT_INSTANCE against vat_instance(INSTANCE_ID): mean %.4f/255" % d["mean_abs"])
	check(d["mean_abs"] <= 0.01, "both lookups draw the same picture")
	var empty := await capture()
	check(image_diff(shots["VAT_INSTANCE"], empty)["mean_abs"] > 1.0, "the crowd was drawn (the test can fail)")
	# Custom data per actor, through the GPU frame and the CPU frame.
	await _compare("custom_data", _grid(soldier_body(), 6, 1.5, Vector3(-4, 0, 0), _custom_material("VAT_INSTANCE")))


## A moving crowd whose actors change clips (their new states go through the recent-state layers,
## read by the pass as by the shader) in LOD bands: the same levels and picture in both frames.
func test_moving_crowd_changing_clips_in_lod_bands() -> void:
	stage(Vector3(0, 4, 0), Vector3(0, 2, -40))
	var va := _soldier_lod()
	var setup := func(driven: bool) -> AnimatedActorMeshInstance:
		var crowd := AnimatedActorMeshInstance.new()
		crowd.gpu_driven = driven
		crowd.models = [va] as Array[VertexAnimation]
		crowd.paused = true
		var positions := PackedVector3Array()
		var yaws := PackedFloat32Array()
		var clips := PackedInt32Array()
		var starts := PackedFloat32Array()
		for i in 20:
			for j in 20:
				positions.append(Vector3(i * 12.0 - 120.0, 0, -j * 12.0 - 10.0))
				yaws.append(0.3 * i)
				clips.append(0)
				starts.append(0.0)
		crowd.set_actors(positions, yaws, clips, starts)
		crowd.set_model_actors(0, PackedInt32Array(range(positions.size())))
		crowd.submit()
		# Everyone moves a little, and one in ten plays another clip: recent states.
		var placements := PackedVector4Array()
		for i in positions.size():
			placements.append(Vector4(positions[i].x + 0.5, 0, positions[i].z - 0.5, yaws[i]))
		crowd.set_actor_placements(placements)
		var ids := PackedInt32Array(range(0, positions.size(), 10))
		var new_clips := PackedInt32Array()
		var new_starts := PackedFloat32Array()
		for id in ids:
			new_clips.append(1)
			new_starts.append(0.0)
		crowd.set_actor_clips(ids, new_clips, new_starts)
		crowd.submit()
		return crowd
	await _compare("moving_clips_lod_bands", setup)
