# The crowd frame from Godot: culling against the current camera, levels of detail by distance,
# the properties that steer them and their bad values. Headless is enough: the frame runs on the
# CPU and its counts say what each MultiMesh draws (tests/render checks the pictures). A crowd
# runs the frame in its own _process, after the tree's process_frame signal: hence frames(2).
extends VatTest


## A soldier body with three levels (LOD0's mesh three times: the counts, not the meshes, matter).
func _three_level_body() -> VertexAnimation:
	var va := VertexAnimation.new()
	va.source_scene = load("res://generated/soldier.tscn")
	va.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	va.bake()
	va.lod_meshes = [va.mesh, va.mesh]
	return va


## A current camera at `pos` looking at `target` with a vertical field of view of `fov` degrees.
func _camera(pos: Vector3, target: Vector3, fov := 30.0) -> Camera3D:
	var cam := Camera3D.new()
	cam.fov = fov
	root.add_child(cam)
	cam.look_at_from_position(pos, target)
	cam.current = true
	return cam


## An AnimatedActorMeshInstance of `va` with one actor (carrying the model) per position.
func _actors(va: VertexAnimation, positions: Array) -> AnimatedActorMeshInstance:
	var crowd := AnimatedActorMeshInstance.new()
	crowd.models = [va] as Array[VertexAnimation]
	root.add_child(crowd)
	_place(crowd, positions)
	return crowd


## Sets `crowd`'s actors at `positions` (yaw 0, clip 0), each carrying model 0, and submits.
func _place(crowd: AnimatedActorMeshInstance, positions: Array) -> void:
	var ids := PackedInt32Array()
	for i in positions.size():
		ids.append(i)
	var yaws := PackedFloat32Array()
	yaws.resize(positions.size())
	crowd.set_actors(PackedVector3Array(positions), yaws, PackedInt32Array(), PackedFloat32Array())
	crowd.set_model_actors(0, ids)
	crowd.submit()


func _sum(counts: PackedInt32Array) -> int:
	var n := 0
	for c in counts:
		n += c
	return n


func test_actors_outside_the_view_are_not_drawn() -> void:
	_camera(Vector3(0, 2, 10), Vector3(0, 1, 0), 40.0)
	var va := soldier_body()
	# Two in front of the camera; one behind it, one far to the side, one far below the ground.
	var positions := [Vector3(0, 0, 0), Vector3(2, 0, -5), Vector3(0, 0, 20), Vector3(-100, 0, 0),
		Vector3(0, -50, 0)]
	var crowd := _actors(va, positions)
	check_eq(crowd.get_lod_counts(), PackedInt32Array([2]), "two actors drawn at LOD0")
	check_eq(crowd.get_lod_instance_count(0, 0), 2, "two body instances drawn")
	check_eq(crowd.get_drawn_vertex_count(), 2 * va.vertex_count, "vertices drawn")
	crowd.culling = false
	await frames(2)
	check_eq(crowd.get_lod_counts(), PackedInt32Array([5]), "culling off draws all five")
	crowd.culling = true
	await frames(2)
	check_eq(crowd.get_lod_instance_count(0, 0), 2, "culling on again")
	# The retained node culls the same way.
	var retained := AnimatedMeshInstance.new()
	retained.animation = va
	root.add_child(retained)
	for p in positions:
		retained.add_instance(Transform3D(Basis.IDENTITY, p))
	retained.submit()
	check_eq(retained.get_lod_counts(), PackedInt32Array([2]), "AnimatedMeshInstance: two drawn")
	# A culling camera looking the other way sees the one behind.
	var back := Camera3D.new()
	root.add_child(back)
	back.look_at_from_position(Vector3(0, 2, 10), Vector3(0, 1, 30))
	retained.culling_camera = retained.get_path_to(back)
	retained.submit()
	await frames(2)
	check_eq(retained.get_lod_counts(), PackedInt32Array([1]), "culling_camera: the actor behind")


func test_levels_follow_the_distance_and_the_properties() -> void:
	var cam := _camera(Vector3(0, 1, 0), Vector3(0, 1, -10), 30.0)
	var va := _three_level_body()
	var switch := va.get_lod_switch_distances(cam.fov, 480)
	check_eq(switch.size(), 2, "two switch distances")
	# Two actors in each band, well away from its edges.
	var positions := []
	for z in [20.0, switch[0] * 0.8, switch[0] * 1.2, switch[1] * 0.9, switch[1] * 1.2, switch[1] * 1.6]:
		positions.append(Vector3(0, 0, -z))
	var crowd := _actors(va, positions)
	check_eq(crowd.get_lod_counts(), PackedInt32Array([2, 2, 2]), "two actors per band")
	check_eq(crowd.get_lod_instance_count(0, 2), 2, "two instances at LOD2")
	crowd.force_lod = 1
	await frames(2)
	check_eq(crowd.get_lod_counts(), PackedInt32Array([0, 6, 0]), "force_lod 1")
	crowd.force_lod = -1
	crowd.max_lod = 1
	await frames(2)
	check_eq(crowd.get_lod_counts(), PackedInt32Array([2, 4, 0]), "max_lod 1")
	crowd.max_lod = -1
	crowd.lod_bias = 5.0
	await frames(2)
	check_eq(crowd.get_lod_counts(), PackedInt32Array([0, 0, 6]), "lod_bias 5")
	crowd.lod_bias = 0.0
	crowd.shadow_lod = 2
	await frames(2)
	check_eq(crowd.get_lod_instance_count(0, 2, true), 6, "shadow_lod 2: every actor's shadow from LOD2")
	check_eq(crowd.get_lod_instance_count(0, 0, true), 0, "and none from LOD0")
	crowd.shadow_lod = 1
	await frames(2)
	check_eq([crowd.get_lod_instance_count(0, 0, true), crowd.get_lod_instance_count(0, 1, true),
		crowd.get_lod_instance_count(0, 2, true)], [0, 4, 2],
		"shadow_lod 1: LOD0 and LOD1 actors cast from LOD1, LOD2 actors from their own")
	crowd.shadow_lod = -1
	# A model without levels draws LOD0 for every actor.
	var plain := _actors(soldier_body(), positions)
	check_eq(plain.get_lod_counts(), PackedInt32Array([6]), "one level: all at LOD0")


func test_omni_and_spot_light_shadows_keep_actors_just_outside() -> void:
	# Looking down -z from z = 10: an actor 3 m left of the view's edge at z = 0 is culled
	# unless a shadowed light near it (and reaching into the view) may throw its shadow in.
	_camera(Vector3(0, 1, 10), Vector3(0, 1, 0), 40.0)
	var half_width := 10.0 * tan(deg_to_rad(20.0)) * 16.0 / 9.0
	var crowd := _actors(soldier_body(), [Vector3(0, 0, 0), Vector3(-half_width - 3.0, 0, 0)])
	check_eq(crowd.get_lod_instance_count(0, 0, false), 1, "one in view")
	check_eq(crowd.get_lod_instance_count(0, 0, true), 0, "no light: the other is culled")
	for light: Light3D in [OmniLight3D.new(), SpotLight3D.new()]:
		light.position = Vector3(-half_width + 1.0, 2.0, 0.0)
		light.set_param(Light3D.PARAM_RANGE, 6.0)
		root.add_child(light)
		await frames(2)
		check_eq(crowd.get_lod_instance_count(0, 0, true), 0, "%s without shadows: still culled" % light.get_class())
		light.shadow_enabled = true
		await frames(2)
		check_eq(crowd.get_lod_instance_count(0, 0, true), 1, "%s with shadows: kept for its shadow" % light.get_class())
		light.set_param(Light3D.PARAM_RANGE, 1.0)
		await frames(2)
		check_eq(crowd.get_lod_instance_count(0, 0, true), 0, "%s out of reach: culled" % light.get_class())
		light.free()
		await frames(2)


func test_lights_entering_and_leaving_reach_the_frame() -> void:
	# The frame keeps each viewport's lights from one search until a light enters or leaves the
	# tree: a light inside a subtree that enters whole, taken out, put back, then freed with its
	# parent, each seen by the next frame. A crowd node entering later finds the same lights.
	_camera(Vector3(0, 1, 10), Vector3(0, 1, 0), 40.0)
	var half_width := 10.0 * tan(deg_to_rad(20.0)) * 16.0 / 9.0
	var positions := [Vector3(0, 0, 0), Vector3(-half_width - 3.0, 0, 0)]
	var crowd := _actors(soldier_body(), positions)
	await frames(2)
	check_eq(crowd.get_lod_instance_count(0, 0, true), 0, "no light: the actor outside is culled")
	var holder := Node3D.new()
	var inner := Node3D.new()
	holder.add_child(inner)
	var light := OmniLight3D.new()
	light.position = Vector3(-half_width + 1.0, 2.0, 0.0)
	light.set_param(Light3D.PARAM_RANGE, 6.0)
	light.shadow_enabled = true
	inner.add_child(light)
	root.add_child(holder)
	await frames(2)
	check_eq(crowd.get_lod_instance_count(0, 0, true), 1, "a light entering inside a subtree")
	var later := _actors(soldier_body(), positions)
	await frames(2)
	check_eq(later.get_lod_instance_count(0, 0, true), 1, "a crowd entering later sees it too")
	inner.remove_child(light)
	await frames(2)
	check_eq(crowd.get_lod_instance_count(0, 0, true), 0, "taken out of the tree")
	inner.add_child(light)
	await frames(2)
	check_eq(crowd.get_lod_instance_count(0, 0, true), 1, "put back")
	holder.free()
	await frames(2)
	check_eq(crowd.get_lod_instance_count(0, 0, true), 0, "freed with its parent")
	later.free()


func test_a_large_crowd_counts_as_its_two_halves() -> void:
	# 40,000 actors: past the frame's parallel threshold (32,768), so its tasks run on the calling
	# thread and the extension's pool; each half alone stays below it and runs on the calling
	# thread only. Every actor's level and culling depend on that actor alone, so the whole
	# crowd's counts per level are the halves' sums.
	_camera(Vector3(0, 6, 60), Vector3(0, 0, -40), 50.0)
	var va := _three_level_body()
	var all := []
	for i in 40000:
		all.append(Vector3((i % 200) * 2.0 - 200.0, 0, -(i / 200) * 2.0 + 40.0))
	var whole := _actors(va, all)
	var first := _actors(va, all.slice(0, 20000))
	var second := _actors(va, all.slice(20000))
	var counts := whole.get_lod_counts()
	var halves := PackedInt32Array()
	for l in counts.size():
		halves.append(first.get_lod_counts()[l] + second.get_lod_counts()[l])
	print("    whole %s, halves %s" % [counts, halves])
	check_eq(counts, halves, "the whole crowd's levels are its halves' sums")
	var drawn := _sum(counts)
	check(drawn > 1000 and drawn < 40000, "some drawn, some culled (%d)" % drawn)
	check(counts.size() == 3 and counts[0] > 0 and counts[1] > 0 and counts[2] > 0, "every level drawn")
	for crowd in [whole, first, second]:
		crowd.free()


func test_bad_frame_properties_are_refused() -> void:
	_camera(Vector3(0, 2, 10), Vector3(0, 1, 0))
	var crowd := _actors(soldier_body(), [Vector3.ZERO, Vector3(0, 0, 40)])
	crowd.lod_bias = NAN
	check_eq(crowd.lod_bias, 0.0, "a NAN bias is refused")
	crowd.lod_bias = INF
	check_eq(crowd.lod_bias, 0.0, "an infinite bias is refused")
	for property in ["max_lod", "force_lod", "shadow_lod"]:
		crowd.set(property, -2)
		check_eq(crowd.get(property), -1, "%s -2 is refused" % property)
		crowd.set(property, 3)
		check_eq(crowd.get(property), 3, "%s 3 is taken" % property)
		crowd.set(property, -1)
	# A culling camera that names no camera: one error, and nothing is culled.
	var not_a_camera := Node3D.new()
	root.add_child(not_a_camera)
	crowd.culling_camera = crowd.get_path_to(not_a_camera)
	await frames(2)
	check_eq(crowd.get_lod_counts(), PackedInt32Array([2]), "no camera: nothing culled")
	crowd.culling_camera = NodePath("")
	await frames(2)
	check_eq(crowd.get_lod_counts(), PackedInt32Array([1]), "the viewport camera culls again")


func test_bad_custom_data_is_refused_and_changes_nothing() -> void:
	var crowd := AnimatedActorMeshInstance.new()
	crowd.models = [soldier_body()] as Array[VertexAnimation]
	root.add_child(crowd)
	crowd.begin()
	check_eq(crowd.add_actor(Transform3D.IDENTITY, 0, 0.0, 1.0, Color(1, 0, 0, 1)), 0, "an actor with custom data")
	check_eq(crowd.add_actor(Transform3D.IDENTITY, 0, 0.0, 1.0, Color(NAN, 0, 0, 1)), -1, "a NAN custom value is refused")
	check_eq(crowd.get_actor_count(), 1, "and no actor added")
	crowd.add_actor(Transform3D.IDENTITY)
	crowd.set_actor_custom(PackedInt32Array([0, 1]), PackedColorArray([Color.RED]))
	crowd.set_actor_custom(PackedInt32Array([0, 2]), PackedColorArray([Color.RED, Color.BLUE]))
	crowd.set_actor_custom(PackedInt32Array([-1]), PackedColorArray([Color.RED]))
	crowd.set_actor_custom(PackedInt32Array([1]), PackedColorArray([Color(0, INF, 0)]))
	crowd.set_actor_custom(PackedInt32Array([1, 0]), PackedColorArray([Color.BLUE, Color.GREEN]))
	crowd.submit()
	check_eq(crowd.get_actor_count(), 2, "two actors")


## A crowd draws its animation's latest bake: baking the resource again (the inspector's Bake
## button while a preview shows, or bake() in a running game) rebuilds every crowd node drawing
## it, on the next frame, and keeps the retained node's instances.
func test_a_new_bake_reaches_the_crowds_drawing_it() -> void:
	_camera(Vector3(0, 2, 10), Vector3(0, 1, 0), 40.0)
	var va := VertexAnimation.new()
	va.source_scene = load("res://generated/soldier.tscn")
	va.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	va.lod_enabled = false
	check_eq(va.bake(), OK, "the body bakes")
	var retained := AnimatedMeshInstance.new()
	retained.animation = va
	root.add_child(retained)
	retained.add_instance(Transform3D.IDENTITY)
	retained.submit()
	var actors := _actors(va, [Vector3.ZERO])
	await frames(2)
	var body_vertices := va.vertex_count
	check_eq(retained.get_drawn_vertex_count(), body_vertices, "the retained node draws the body")
	check_eq(actors.get_drawn_vertex_count(), body_vertices, "the actor node draws the body")
	# The same resource baked again from the whole soldier: more vertices.
	va.meshes = [] as Array[NodePath]
	check_eq(va.bake(), OK, "the whole soldier bakes into the same resource")
	check(va.vertex_count > body_vertices, "the whole soldier has more vertices (%d > %d)" % [va.vertex_count, body_vertices])
	await frames(2)
	_place(actors, [Vector3.ZERO])
	await frames(2)
	check_eq(retained.get_instance_count(), 1, "the retained node keeps its instance")
	check_eq(retained.get_drawn_vertex_count(), va.vertex_count, "the retained node draws the new bake")
	check_eq(actors.get_drawn_vertex_count(), va.vertex_count, "the actor node draws the new bake")


## Equipment drawn with its body's bone texture (`bone_source`) follows the body's new bake too:
## baked again with other clips, the body no longer fits the sword's skin table, and the crowd
## drawing only the sword says so instead of drawing the old bones.
func test_a_new_bake_of_the_body_reaches_its_equipment() -> void:
	_camera(Vector3(0, 2, 10), Vector3(0, 1, 0), 40.0)
	var soldier := load("res://generated/soldier.tscn") as PackedScene
	var body := VertexAnimation.new()
	body.source_scene = soldier
	body.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	body.lod_enabled = false
	check_eq(body.bake(), OK, "the body bakes")
	check_eq(body.baked_storage, VertexAnimation.STORAGE_BONES, "the body bakes in bone storage")
	var full := soldier.instantiate()
	var sword_path := NodePath()
	for mi in full.find_children("*", "MeshInstance3D", true, false):
		if mi.name.to_lower().contains("sword"):
			sword_path = full.get_path_to(mi)
	full.free()
	var sword := VertexAnimation.new()
	sword.source_scene = soldier
	sword.meshes = [sword_path] as Array[NodePath]
	sword.lod_enabled = false
	sword.bone_source = body
	check_eq(sword.bake(), OK, "the sword bakes on the body's bone texture")
	var actors := _actors(sword, [Vector3.ZERO])
	await frames(2)
	check_eq(actors.get_drawn_vertex_count(), sword.vertex_count, "the sword is drawn")
	body.clips = PackedStringArray([body.get_clip_names()[0]])
	check_eq(body.bake(), OK, "the body bakes again with one clip")
	await frames(2)
	_place(actors, [Vector3.ZERO])
	await frames(2)
	check_eq(actors.get_drawn_vertex_count(), 0, "the sword no longer fits its body's bones: nothing drawn")
