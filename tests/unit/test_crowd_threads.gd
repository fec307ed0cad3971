# Crowd nodes driven from WorkerThreadPool tasks, as a user might: every crowd call that reaches
# the node off the main thread is refused with one error and changes nothing; nothing panics or
# aborts. That covers every shape of call: typed calls with every argument given, calls that
# leave defaults out, packed-array arguments and property assignments (the library is built with
# gdext's thread-safe instance storage, so gdext's glue hands them all to the node).
extends VatTest

const Errors := preload("res://unit/test_crowd_errors_lib.gd")
var _errors: Errors


func before_all() -> void:
	_errors = Errors.new()


func after_all() -> void:
	_errors.stop()


## Runs `task` on a WorkerThreadPool thread and waits for it; returns the errors it printed.
func _on_worker(task: Callable) -> Array[String]:
	_errors.take()
	var id := WorkerThreadPool.add_task(task)
	WorkerThreadPool.wait_for_task_completion(id)
	return _errors.take()


func _check_refusals(lines: Array[String], calls: int, label: String) -> void:
	if not _errors.available():
		return
	var refused := 0
	for l in lines:
		check(not l.contains("panic"), "%s: no gdext panic (%s)" % [label, l])
		if l.contains("off the main thread"):
			refused += 1
	check_eq(refused, calls, "%s: one refusal per call" % label)
	check_eq(lines.size(), calls, "%s: no other error" % label)


func test_actor_crowd_calls_from_a_worker_are_refused() -> void:
	var a := AnimatedActorMeshInstance.new()
	a.models = [soldier_body()] as Array[VertexAnimation]
	root.add_child(a)
	a.begin()
	a.add_actor(Transform3D.IDENTITY, 0, NAN, 1.0)
	a.add_model(0, 0, Color.WHITE)
	a.submit()
	a.time = 2.0
	var out := {}
	var lines := _on_worker(_drive_actors.bind(a, out))
	_check_refusals(lines, 9, "actor crowd")
	check_eq(a.time, 2.0, "a property assignment off the main thread changes nothing")
	check_eq(out.get("actor"), -1, "add_actor off the main thread returns -1")
	check_eq(a.get_actor_count(), 1, "the main thread's actor is kept")
	check_eq(a.get_model_instance_count(0), 1, "and its model")
	check_eq(out.get("count"), 0, "a getter off the main thread answers nothing")
	# The supported way: arrays filled in the worker, handed over on the main thread.
	var filled := {}
	lines = _on_worker(_fill_arrays.bind(filled))
	check_eq(lines.size() if _errors.available() else 0, 0, "filling arrays in a worker is fine")
	a.begin()
	a.set_actors(filled["positions"], filled["yaws"], PackedInt32Array(), PackedFloat32Array())
	check_eq(a.get_actor_count(), 100, "the worker's arrays go in on the main thread")
	a.submit()


func test_retained_crowd_calls_from_a_worker_are_refused() -> void:
	var m := AnimatedMeshInstance.new()
	m.animation = soldier_body()
	root.add_child(m)
	var id0 := m.add_instance(Transform3D.IDENTITY, 0, Color.WHITE, 0)
	var out := {}
	var lines := _on_worker(_drive_retained.bind(m, id0, out))
	_check_refusals(lines, 6, "retained crowd")
	check_eq(m.time, 0.0, "a property assignment off the main thread changes nothing")
	check_eq(out.get("id"), -1, "add_instance off the main thread returns -1")
	check_eq(m.get_instance_count(), 1, "no instance added or removed off the main thread")
	check(m.get_instance_transform(id0).is_equal_approx(Transform3D.IDENTITY), "instance not moved")
	m.submit()


func _drive_actors(a: AnimatedActorMeshInstance, out: Dictionary) -> void:
	a.begin()
	# Every argument given: gdext builds default arguments as Variants on the calling thread.
	out["actor"] = a.add_actor(Transform3D.IDENTITY, 0, NAN, 1.0, Color(0, 0, 0, 0))
	a.add_model(0, 0, Color.WHITE)
	a.set_actor_blend(0, 0, 0.0, 0.1)
	out["count"] = a.get_actor_count()
	a.time = 3.0
	a.set_actors(PackedVector3Array([Vector3.ONE]), PackedFloat32Array([0.0]), PackedInt32Array(),
		PackedFloat32Array())
	a.add_actor(Transform3D.IDENTITY)
	a.submit()


func _drive_retained(m: AnimatedMeshInstance, id0: int, out: Dictionary) -> void:
	out["id"] = m.add_instance(Transform3D.IDENTITY, 0, Color.WHITE, 0)
	m.play_animation(id0, 1, 0.0, 1.0)
	m.set_instance_transform(id0, Transform3D(Basis.IDENTITY, Vector3.ONE))
	m.remove_instance(id0)
	m.time = 5.0
	m.submit()


func _fill_arrays(out: Dictionary) -> void:
	var positions := PackedVector3Array()
	var yaws := PackedFloat32Array()
	for i in 100:
		positions.append(Vector3(i, 0, 0))
		yaws.append(0.1 * i)
	out["positions"] = positions
	out["yaws"] = yaws
