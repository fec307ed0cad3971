# Crowd nodes' bookkeeping and bad input (headless: the GPU calls are no-ops here, the logic is real).
extends VatTest

const SOLDIER := "res://generated/soldier.tscn"


func _actors(models: Array[VertexAnimation]) -> AnimatedActorMeshInstance:
	var a := AnimatedActorMeshInstance.new()
	a.models = models
	root.add_child(a)
	return a


func test_immediate_mode_counts() -> void:
	var a := _actors([soldier_body(), soldier_body()] as Array[VertexAnimation])
	a.begin()
	for i in 5:
		check_eq(a.add_actor(Transform3D(Basis.IDENTITY, Vector3(i, 0, 0)), 1), i, "actor index")
		a.add_model(0)
		if i % 2 == 0:
			a.add_model(1, 0, Color.RED)
	a.submit()
	check_eq(a.get_actor_count(), 5, "actors")
	check_eq(a.get_model_instance_count(0), 5, "model 0 instances")
	check_eq(a.get_model_instance_count(1), 3, "model 1 instances")
	a.begin()
	check_eq(a.get_actor_count(), 0, "begin clears")


func test_bad_input_is_refused_and_the_rest_kept() -> void:
	var a := _actors([soldier_body()] as Array[VertexAnimation])
	a.begin()
	a.add_model(0)
	check_eq(a.get_model_instance_count(0), 0, "add_model before add_actor is ignored")
	check_eq(a.add_actor(Transform3D(Basis.IDENTITY, Vector3(NAN, 0, 0))), -1, "NaN transform refused")
	check_eq(a.add_actor(Transform3D(Basis.IDENTITY, Vector3(INF, 0, 0))), -1, "infinite transform refused")
	check_eq(a.add_actor(Transform3D.IDENTITY, 99), -1, "clip out of range refused")
	check_eq(a.add_actor(Transform3D.IDENTITY, -1), -1, "negative clip refused")
	check_eq(a.add_actor(Transform3D.IDENTITY, 0), 0, "a good actor still goes in")
	a.add_model(3)
	a.add_model(0, 7)
	check_eq(a.get_model_instance_count(0), 0, "model index / variation out of range refused")
	a.add_model(0)
	check_eq(a.get_model_instance_count(0), 1, "good model instance kept")
	var bad_ids := PackedInt32Array([0, 5])
	a.set_model_actors(0, bad_ids)
	check_eq(a.get_model_instance_count(0), 1, "bulk with an out-of-range actor id is refused whole")
	a.submit()


func test_bulk_calls() -> void:
	var a := _actors([soldier_body()] as Array[VertexAnimation])
	var n := 3000
	var pos := PackedVector3Array()
	var yaw := PackedFloat32Array()
	var ids := PackedInt32Array()
	for i in n:
		pos.append(Vector3(i % 100, 0, i / 100))
		yaw.append(i * 0.01)
		ids.append(i)
	a.begin()
	a.set_actors(pos, yaw, PackedInt32Array(), PackedFloat32Array())
	a.set_model_actors(0, ids)
	a.submit()
	check_eq(a.get_actor_count(), n, "bulk actors")
	check_eq(a.get_model_instance_count(0), n, "bulk model instances")
	pos[7] = Vector3(NAN, 0, 0)
	a.set_actors(pos, yaw, PackedInt32Array(), PackedFloat32Array())
	check_eq(a.get_actor_count(), n, "NaN in bulk positions is refused (previous actors kept)")
	a.set_actors(pos.slice(0, 10), yaw, PackedInt32Array(), PackedFloat32Array())
	check_eq(a.get_actor_count(), n, "mismatched bulk lengths are refused")


func test_model_lists_replace_and_append() -> void:
	var a := _actors([soldier_body()] as Array[VertexAnimation])
	var pos := PackedVector3Array([Vector3.ZERO, Vector3.ONE, Vector3(2, 0, 0)])
	a.set_actors(pos, PackedFloat32Array([0.0, 0.0, 0.0]), PackedInt32Array(), PackedFloat32Array())
	a.set_model_actors(0, PackedInt32Array([0, 1]))
	a.add_model_actors(0, PackedInt32Array([2]), 0, Color.RED)
	check_eq(a.get_model_instance_count(0), 3, "add_model_actors appends")
	a.add_model_actors(0, PackedInt32Array([3]), 0, Color.RED)
	check_eq(a.get_model_instance_count(0), 3, "an out-of-range actor id is refused whole")
	a.set_model_actors(0, PackedInt32Array([1]))
	check_eq(a.get_model_instance_count(0), 1, "set_model_actors replaces")
	# A replaced list starts a fresh look table: far more distinct tints over time than the
	# 256 a model may show at once are fine.
	var refused := 0
	for i in 300:
		# Lists of alternating length, so a refused call would leave the wrong count.
		var ids := PackedInt32Array([0, 1, 2]) if i % 2 == 0 else PackedInt32Array([0, 1])
		a.set_model_actors(0, ids, 0, Color(i / 300.0, 0.5, 0.5))
		a.submit()
		if a.get_model_instance_count(0) != ids.size():
			refused += 1
	check_eq(refused, 0, "300 frames of changing tints never run out of looks")


func test_unbaked_and_mismatched_models() -> void:
	var a := _actors([VertexAnimation.new()] as Array[VertexAnimation])
	check_eq(a.add_actor(Transform3D.IDENTITY), -1, "unbaked model: nothing added")
	var other := VertexAnimation.new()
	other.source_scene = load(SOLDIER)
	other.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	other.clips = PackedStringArray(["walk", "idle"])
	check_eq(other.bake(), OK, "two-clip bake")
	var b := _actors([soldier_body(), other] as Array[VertexAnimation])
	check_eq(b.add_actor(Transform3D.IDENTITY), -1, "models with different clip tables are refused")


func test_retained_ids_survive_removal() -> void:
	var m := AnimatedMeshInstance.new()
	m.animation = soldier_body()
	root.add_child(m)
	var ids := []
	for i in 4:
		ids.append(m.add_instance(Transform3D(Basis.IDENTITY, Vector3(i, 0, 0)), 0))
	check_eq(ids, [0, 1, 2, 3], "ids")
	m.remove_instance(1)
	check_eq(m.get_instance_count(), 3, "one removed")
	m.play_animation(3, 1, 0.2)
	m.set_instance_transform(2, Transform3D(Basis.IDENTITY, Vector3(9, 0, 0)))
	m.remove_instance(1)
	check_eq(m.get_instance_count(), 3, "removing a removed id changes nothing")
	check_eq(m.add_instance(Transform3D.IDENTITY, 99), -1, "clip out of range refused")
	check_eq(m.add_instance(Transform3D(Basis.IDENTITY, Vector3(0, NAN, 0))), -1, "NaN refused")
	var first: int = m.add_instances(PackedVector3Array([Vector3.ZERO, Vector3.ONE]), PackedFloat32Array([0.0, 1.0]))
	check_eq(first, 4, "bulk ids continue after the highest id")
	check_eq(m.get_instance_count(), 5, "bulk added")
	m.submit()
	m.clear()
	check_eq(m.get_instance_count(), 0, "clear")


func test_long_play_clock_keeps_precision() -> void:
	var m := AnimatedMeshInstance.new()
	m.animation = soldier_body()
	root.add_child(m)
	m.time = 86400.25
	check_near(m.time, 86400.25, 1e-9, "clock is f64")
	m.paused = true
	check_eq(m.add_instance(Transform3D.IDENTITY), 0, "add at a day of play")
	m.submit()


func test_bulk_transforms_and_bad_input() -> void:
	var xforms := []
	for i in 3:
		xforms.append(Transform3D(Basis(Vector3(1, 0, 1).normalized(), 0.3 * i).scaled(Vector3(1, 2, 1)), Vector3(i, 0, -i)))
	var rows := transform_rows(xforms)
	var none_i := PackedInt32Array()
	var none_f := PackedFloat32Array()
	var a := _actors([soldier_body()] as Array[VertexAnimation])
	a.set_actor_transforms(rows, none_i, none_f)
	check_eq(a.get_actor_count(), 0, "set_actor_transforms without full_transform is refused")
	a.full_transform = true
	a.set_actor_transforms(rows, PackedInt32Array([0, 1, 2]), PackedFloat32Array([0.0, 0.5, 1.0]))
	check_eq(a.get_actor_count(), 3, "bulk transforms")
	a.set_actor_transforms(rows.slice(0, 35), none_i, none_f)
	check_eq(a.get_actor_count(), 3, "a partial transform is refused")
	a.set_actor_transforms(rows, PackedInt32Array([0, 99, 0]), none_f)
	check_eq(a.get_actor_count(), 3, "a clip out of range is refused")
	var bad := rows.duplicate()
	bad[12 + 5] = NAN
	a.set_actor_transforms(bad, none_i, none_f)
	check_eq(a.get_actor_count(), 3, "a NaN basis entry is refused")
	a.set_actor_transforms(rows.slice(0, 24), none_i, none_f)
	check_eq(a.get_actor_count(), 2, "a good call replaces the actors")
	a.set_model_actors(0, PackedInt32Array([0, 1]))
	a.submit()

	var m := AnimatedMeshInstance.new()
	m.animation = soldier_body()
	root.add_child(m)
	for i in 3:
		m.add_instance(Transform3D.IDENTITY)
	m.set_instance_transforms(rows, 0)
	for i in 3:
		check(m.get_instance_transform(i).is_equal_approx(xforms[i]), "instance %d has its whole transform" % i)
	m.set_instance_transforms(transform_rows([Transform3D.IDENTITY, Transform3D.IDENTITY]), 2)
	check(m.get_instance_transform(2).is_equal_approx(xforms[2]), "a run past the last id is refused whole")
	m.set_instance_transforms(bad, 0)
	check(m.get_instance_transform(0).is_equal_approx(xforms[0]), "a NaN entry is refused whole")
	m.set_transforms(PackedVector3Array([Vector3.ONE, Vector3(INF, 0, 0)]), PackedFloat32Array([0.0, 0.0]), 0)
	check(m.get_instance_transform(0).is_equal_approx(xforms[0]), "set_transforms refuses a bad entry whole")
	m.set_transforms(PackedVector3Array([Vector3.ONE]), PackedFloat32Array([PI / 2]), 1)
	var t := m.get_instance_transform(1)
	check(t.origin.is_equal_approx(Vector3.ONE) and t.basis.x.normalized().is_equal_approx(Vector3(0, 0, -1)), "set_transforms sets position and yaw")
	m.submit()


func test_shrinking_the_crowd_drops_stale_model_lists() -> void:
	var a := _actors([soldier_body(), soldier_body()] as Array[VertexAnimation])
	var none_i := PackedInt32Array()
	var none_f := PackedFloat32Array()
	var three := PackedVector3Array([Vector3.ZERO, Vector3.ONE, Vector3(2, 0, 0)])
	a.set_actors(three, PackedFloat32Array([0.0, 0.0, 0.0]), none_i, none_f)
	a.set_model_actors(0, PackedInt32Array([0, 2]))
	a.set_model_actors(1, PackedInt32Array([1, 0]))
	a.set_actors(three.slice(0, 2), PackedFloat32Array([0.0, 0.0]), none_i, none_f)
	check_eq(a.get_model_instance_count(0), 0, "a list naming actor 2 of now 2 actors is dropped")
	check_eq(a.get_model_instance_count(1), 2, "a list within the new count is kept")
	a.submit()


# Equipment sets: an actor and its models in one call, the same instances as add_actor + add_model;
# every bad set or id refused with nothing changed.
func test_equipment_sets() -> void:
	var a := _actors([soldier_body(), soldier_body(), soldier_body()] as Array[VertexAnimation])
	var at := func(i: int) -> Transform3D: return Transform3D(Basis.IDENTITY, Vector3(i, 0, 0))
	check(a.set_equipment(0, PackedInt32Array([0, 1, 2])), "body, sword and shield")
	check(a.set_equipment(2, PackedInt32Array([0, 2]), PackedInt32Array([0, 0]),
			PackedColorArray([Color.RED, Color.BLUE])), "two models with their looks")
	a.begin()
	for i in 6:
		var set_id := 0 if i % 2 == 0 else 2
		check_eq(a.add_equipped_actor(at.call(i), set_id, 1, 0.0, 1.0, Color()), i, "actor index")
	check_eq([a.get_model_instance_count(0), a.get_model_instance_count(1), a.get_model_instance_count(2)],
			[6, 3, 6], "instances per model")
	# Refused, and set 0 unchanged.
	check(not a.set_equipment(-1, PackedInt32Array([0])), "negative id")
	check(not a.set_equipment(4096, PackedInt32Array([0])), "id past the last")
	check(not a.set_equipment(0, PackedInt32Array([3])), "model out of range")
	check(not a.set_equipment(0, PackedInt32Array([0]), PackedInt32Array([7])), "variation out of range")
	check(not a.set_equipment(0, PackedInt32Array([0, 1]), PackedInt32Array([0])), "one variation for two models")
	check(not a.set_equipment(0, PackedInt32Array([0]), PackedInt32Array(), PackedColorArray([Color(NAN, 0, 0)])),
			"a tint that is not finite")
	check_eq(a.add_equipped_actor(at.call(6), 1), -1, "a set never defined")
	check_eq(a.add_equipped_actor(at.call(6), -1), -1, "a negative set")
	check_eq(a.add_equipped_actor(at.call(6), 99999), -1, "a set past the last")
	check_eq(a.add_equipped_actor(Transform3D(Basis.IDENTITY, Vector3(NAN, 0, 0)), 0), -1, "a NaN transform")
	check_eq(a.add_equipped_actor(at.call(6), 0, 99), -1, "a clip out of range")
	check_eq(a.get_actor_count(), 6, "no refused call added an actor")
	check_eq([a.get_model_instance_count(0), a.get_model_instance_count(1), a.get_model_instance_count(2)],
			[6, 3, 6], "nor a model instance")
	check_eq(a.add_equipped_actor(at.call(6), 0, 1, 0.0, 1.0, Color()), 6, "set 0 survived the refusals")
	check_eq(a.get_model_instance_count(1), 4, "with its three models")
	a.submit()
	# Sets outlive the frame; clear_equipment forgets them.
	a.begin()
	check_eq(a.add_equipped_actor(at.call(0), 2), 0, "sets are kept across frames")
	check_eq([a.get_model_instance_count(0), a.get_model_instance_count(1), a.get_model_instance_count(2)],
			[1, 0, 1], "set 2's two models")
	a.clear_equipment()
	check_eq(a.add_equipped_actor(at.call(1), 0), -1, "cleared")
	a.submit()
