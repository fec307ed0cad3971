# Crowd nodes refuse what they cannot store or address, with one error, and change nothing:
# speeds and times, bulk calls with one bad entry, ids of instances that are gone, crowds beyond
# the renderer's limits, and untyped model arrays (headless: the bookkeeping is real, drawing is
# checked in tests/render/test_crowd_robust_render.gd).
extends VatTest

const Errors := preload("res://unit/test_crowd_errors_lib.gd")
var _errors: Errors


func before_all() -> void:
	_errors = Errors.new()


func after_all() -> void:
	_errors.stop()


## Checks that exactly `n` vat_crowd errors were printed since the last call (when countable).
func _check_errors(n: int, msg: String) -> void:
	var got := _errors.count()
	if got >= 0:
		check_eq(got, n, msg + ": vat_crowd errors printed")


func _retained(count: int) -> AnimatedMeshInstance:
	var m := AnimatedMeshInstance.new()
	m.animation = soldier_body()
	root.add_child(m)
	for i in count:
		m.add_instance(Transform3D(Basis.IDENTITY, Vector3(i, 0, 0)))
	return m


func test_bad_speeds_and_times_are_refused_with_one_error() -> void:
	var a := AnimatedActorMeshInstance.new()
	a.models = [soldier_body()] as Array[VertexAnimation]
	root.add_child(a)
	a.begin()
	_errors.take()
	for speed: float in [NAN, INF, -INF, 1e30, 65520.0, 70000.0]:
		check_eq(a.add_actor(Transform3D.IDENTITY, 0, NAN, speed), -1, "add_actor speed %s refused" % speed)
		_check_errors(1, "add_actor speed %s" % speed)
	for start: float in [INF, -INF, 1e300]:
		check_eq(a.add_actor(Transform3D.IDENTITY, 0, start, 1.0), -1, "add_actor start %s refused" % start)
		_check_errors(1, "add_actor start %s" % start)
	check_eq(a.add_actor(Transform3D.IDENTITY, 0, NAN, 65504.0), 0, "the largest f16 speed is taken")
	check_eq(a.add_actor(Transform3D.IDENTITY, 0, 12.5, -2.0), 1, "a negative speed plays backwards")
	_check_errors(0, "good actors")
	check_eq(a.get_actor_count(), 2, "only the good actors went in")
	# The bulk call takes start times by the same rule.
	a.set_actors(PackedVector3Array([Vector3.ZERO]), PackedFloat32Array([0.0]), PackedInt32Array(), PackedFloat32Array([1e30]))
	check_eq(a.get_actor_count(), 2, "set_actors refuses the start time add_actor refuses")
	_check_errors(1, "set_actors start 1e30")
	a.set_actor_blend(0, 0, INF, 0.2)
	a.set_actor_blend(0, 0, 0.0, NAN)
	_check_errors(2, "set_actor_blend with a bad time")

	a.time = 5.0
	for t: float in [NAN, INF, -INF, 1e300]:
		a.time = t
		_check_errors(1, "actor time = %s" % t)
	check_eq(a.time, 5.0, "the clock keeps its time")
	for s: float in [NAN, INF, 1e30]:
		a.speed_scale = s
		_check_errors(1, "speed_scale = %s" % s)
	check_eq(a.speed_scale, 1.0, "speed_scale keeps its value")
	a.speed_scale = 2.0
	check_eq(a.speed_scale, 2.0, "a good speed_scale is taken")
	a.submit()

	var m := _retained(2)
	m.time = 3.0
	_errors.take()
	m.time = NAN
	m.time = INF
	_check_errors(2, "retained time = NAN, INF")
	check_eq(m.time, 3.0, "the retained clock keeps its time")
	for speed: float in [NAN, INF, 1e30, 65520.0]:
		m.play_animation(0, 1, 0.0, speed)
		_check_errors(1, "play_animation speed %s" % speed)
		m.play_animations(PackedInt32Array([0, 1]), 1, 0.0, speed)
		_check_errors(1, "play_animations speed %s" % speed)
	m.play_animation(0, 1, NAN, 1.0)
	m.play_animation(0, 1, INF, 1.0)
	_check_errors(2, "play_animation blend NAN, INF")
	m.play_animation(0, 1, 0.25, 1.5)
	_check_errors(0, "a good play_animation")
	m.submit()


func test_play_animations_checks_every_id_first() -> void:
	var m := _retained(3)
	m.submit()
	_errors.take()
	m.play_animations(PackedInt32Array([0, 999, 2]), 1)
	_check_errors(1, "one bad id")
	# What it changes (nothing here) is drawn at the next submit: see the render test.
	m.submit()
	m.remove_instance(1)
	m.play_animations(PackedInt32Array([0, 1]), 1)
	_check_errors(1, "a removed id")
	m.play_animations(PackedInt32Array([0, 2]), 99)
	_check_errors(1, "a bad clip")
	m.play_animations(PackedInt32Array([0, 2]), 1, 0.2, 2.0)
	_check_errors(0, "a good bulk call")
	m.submit()


func test_ids_of_gone_instances_are_refused() -> void:
	var m := _retained(3)
	var ids := [0, 1, 2]
	var where := Transform3D(Basis.IDENTITY, Vector3(7, 0, 0))
	m.remove_instance(1)
	var reused := m.add_instance(where)
	check(reused != 1, "a reused slot gets a new id (got %d)" % reused)
	check_eq(m.get_instance_count(), 3, "three live")
	_errors.take()
	# The old id names nobody: it cannot move, recolour, replay or remove the new instance.
	m.set_instance_transform(1, Transform3D.IDENTITY)
	m.set_instance_tint(1, Color.RED)
	m.play_animation(1, 1)
	m.remove_instance(1)
	_check_errors(4, "four calls with a removed id")
	check_eq(m.get_instance_count(), 3, "the new instance was not removed by the old id")
	check(m.get_instance_transform(reused).is_equal_approx(where), "the new instance did not move")
	m.clear()
	var fresh := m.add_instance(where)
	check(fresh != ids[0], "ids after clear() differ from the ids before it (got %d)" % fresh)
	_errors.take()
	for id: int in ids:
		m.set_instance_transform(id, Transform3D.IDENTITY)
	_check_errors(3, "ids from before clear()")
	check(m.get_instance_transform(fresh).is_equal_approx(where), "old ids do not reach the new instance")
	# add_instances still hands out consecutive ids after a clear.
	m.clear()
	var first := m.add_instances(PackedVector3Array([Vector3.ZERO, Vector3.ONE]), PackedFloat32Array([0.0, 0.0]))
	m.set_instance_transform(first + 1, where)
	check(m.get_instance_transform(first + 1).is_equal_approx(where), "bulk ids are consecutive")
	_check_errors(0, "good ids")
	m.submit()


func test_untyped_model_arrays_are_taken() -> void:
	var army: Node = AnimatedActorMeshInstance.new()  # an untyped receiver, as $Army is
	root.add_child(army)
	var body := soldier_body()
	army.models = [body, body]
	check_eq(army.models.size(), 2, "an untyped array of VertexAnimations is taken")
	check_eq(army.models.get_typed_class_name(), &"VertexAnimation", "stored typed")
	army.begin()
	army.add_actor(Transform3D.IDENTITY)
	army.add_model(1)
	check_eq(army.get_model_instance_count(1), 1, "model 1 exists")
	_errors.take()
	army.models = [body, Resource.new()]
	_check_errors(1, "a wrong element")
	check_eq(army.models.size(), 2, "a wrong element changes nothing")
	army.models = [body, 42]
	_check_errors(1, "a number")
	army.material_overrides = [null, null]
	check_eq(army.material_overrides.size(), 2, "material_overrides take untyped arrays too")
	var via_get := get_node_or_null_untyped(army)
	via_get.models = [body]
	check_eq(army.models.size(), 1, "through get_node()")
	# models.append on the exported array is honoured at the next begin().
	army.models.append(body)
	army.begin()
	army.add_actor(Transform3D.IDENTITY)
	army.add_model(1)
	check_eq(army.get_model_instance_count(1), 1, "model 1 after models.append")
	army.submit()
	var made: Object = ClassDB.instantiate(&"AnimatedActorMeshInstance")
	made.models = [body]
	check_eq(made.models.size(), 1, "through ClassDB.instantiate()")
	made.free()


func get_node_or_null_untyped(node: Node) -> Object:
	return node.get_parent().get_node(NodePath(node.name))


func test_crowds_beyond_the_index_limit_are_refused() -> void:
	var limit := 1 << 24
	var m := _retained(0)
	var pos := PackedVector3Array()
	pos.resize(limit)
	var yaws := PackedFloat32Array()
	yaws.resize(limit)
	check_eq(m.add_instances(pos, yaws), 0, "2^24 instances fit")
	_errors.take()
	check_eq(m.add_instance(Transform3D.IDENTITY), -1, "instance 2^24 + 1 is refused")
	check_eq(m.add_instances(PackedVector3Array([Vector3.ZERO]), PackedFloat32Array([0.0])), -1, "bulk too")
	_check_errors(2, "two refusals")
	check_eq(m.get_instance_count(), limit, "the crowd keeps 2^24 instances")
	m.clear()
	pos = PackedVector3Array()
	m.queue_free()

	var a := AnimatedActorMeshInstance.new()
	a.models = [soldier_body()] as Array[VertexAnimation]
	a.full_transform = true
	root.add_child(a)
	var big := PackedVector3Array()
	big.resize(limit + 1)
	var big_yaws := PackedFloat32Array()
	big_yaws.resize(limit + 1)
	_errors.take()
	a.set_actors(big, big_yaws, PackedInt32Array(), PackedFloat32Array())
	_check_errors(1, "2^24 + 1 full-transform actors")
	check_eq(a.get_actor_count(), 0, "refused whole")
	big = PackedVector3Array()
	big_yaws = PackedFloat32Array()
	a.set_actors(PackedVector3Array([Vector3.ZERO]), PackedFloat32Array([0.0]), PackedInt32Array(), PackedFloat32Array())
	check_eq(a.get_actor_count(), 1, "a small crowd still goes in")
	a.submit()


## A Logger that, on the first error containing `trigger`, calls back into `army` (a script
## Logger runs inside the call that reported the error, so the node is still in that call).
const REENTER := """
extends Logger
var army: Object
var trigger := ""
var results: Array = []
var _inside := false

func _log_error(function: String, file: String, line: int, code: String, rationale: String,
		editor_notify: bool, error_type: int, script_backtraces: Array[ScriptBacktrace]) -> void:
	if _inside or army == null or not (code + " " + rationale).contains(trigger):
		return
	_inside = true
	results.append(army.add_actor(Transform3D.IDENTITY))
	army.add_model(0)
	army.set_actor_blend(0, 0, 0.0, 0.1)
	results.append(army.get_actor_count())
	results.append(army.get_model_instance_count(0))
	results.append(army.get_lod_counts().size())
	_inside = false
"""


func test_calls_from_a_callback_inside_a_call_are_refused() -> void:
	if not _errors.available():
		skip("no script Logger in this Godot")
		return
	var a := AnimatedActorMeshInstance.new()
	a.models = [soldier_body()] as Array[VertexAnimation]
	root.add_child(a)
	a.begin()
	var script := GDScript.new()
	script.source_code = REENTER
	check_eq(script.reload(), OK, "the callback script compiles")
	var logger: Object = script.new()
	logger.set("army", a)
	OS.call("add_logger", logger)
	_errors.take()
	# add_actor reports the bad clip while it holds the frame: the calls made from the callback
	# then are refused (each with one error), and nothing they would have changed is changed.
	logger.set("trigger", "clip 99 out of range")
	check_eq(a.add_actor(Transform3D.IDENTITY, 99), -1, "the bad clip is refused")
	# Godot hands no Logger the errors logged inside a Logger, so the refusals' own errors
	# cannot be counted here; a panic instead of one would fail the run ("[panic " in the log).
	check_eq(logger.get("results"), [-1, 0, 0, 0], "calls from inside add_actor did nothing")
	_check_errors(1, "the bad clip")
	check_eq(a.get_actor_count(), 0, "no actor went in")
	# The same from inside add_model, with an actor in the frame.
	check_eq(a.add_actor(Transform3D.IDENTITY), 0, "the frame is free again after the refusals")
	logger.set("results", [])
	logger.set("trigger", "model index 5 out of range")
	a.add_model(5)
	check_eq(logger.get("results"), [-1, 0, 0, 0], "calls from inside add_model did nothing")
	_check_errors(1, "the bad model index")
	a.add_model(0)
	check_eq(a.get_model_instance_count(0), 1, "add_model works again")
	check_eq(a.get_actor_count(), 1, "still one actor")
	OS.call("remove_logger", logger)
	a.submit()
