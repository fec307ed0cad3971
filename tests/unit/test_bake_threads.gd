# Baking from WorkerThreadPool tasks, as a user keeping the editor or game responsive might try.
# A bake poses the character in the running scene tree, which only the main thread may touch, so
# bake() off the main thread is refused with one error and ERR_UNAVAILABLE: never OK for nothing,
# never an abort, and the resources stay as they were.
#
# Reading a VertexAnimation from several threads at once (a game's loading threads, the editor's
# own threads) must succeed everywhere: the library is built with gdext's thread-safe instance
# storage, and this fails (a gdext panic) without it.
extends VatTest

const Errors := preload("res://unit/test_crowd_errors_lib.gd")
const QUIRKY := "res://generated/quirky.tscn"


func test_bakes_from_a_worker_group_are_refused() -> void:
	QuirkyCharacter.save(QUIRKY)
	var scene := load(QUIRKY) as PackedScene
	var vas: Array[VertexAnimation] = []
	for i in 4:
		var va := VertexAnimation.new()
		va.source_scene = scene
		vas.append(va)
	var results := PackedInt32Array([-1, -1, -1, -1])
	var task := func(i: int) -> void:
		results[i] = vas[i].bake()
	var group := WorkerThreadPool.add_group_task(task, 4)
	WorkerThreadPool.wait_for_group_task_completion(group)
	for i in 4:
		check_eq(results[i], ERR_UNAVAILABLE, "bake() on worker %d is refused" % i)
		check(not vas[i].is_baked(), "worker %d baked nothing" % i)
	# The same resources bake on the main thread.
	check_eq(vas[0].bake(), OK, "the main thread bakes")
	check(vas[0].is_baked(), "and it is baked")


func test_baker_node_from_a_worker_is_refused() -> void:
	var baker := VertexAnimationBaker.new()
	root.add_child(baker)
	baker.add_child(load(QUIRKY).instantiate())
	var target := VertexAnimation.new()
	var targets: Array[VertexAnimation] = [target]
	baker.targets = targets
	var result := [-1]
	var id := WorkerThreadPool.add_task(func() -> void: result[0] = baker.bake())
	WorkerThreadPool.wait_for_task_completion(id)
	check_eq(result[0], ERR_UNAVAILABLE, "VertexAnimationBaker.bake() on a worker is refused")
	check(not target.is_baked(), "nothing baked")


## Reads every stored property of `va` `rounds` times; returns how many reads differed from
## `expected` (objects by identity, arrays by size: the values never change here).
static func _read_all(va: VertexAnimation, expected: Dictionary, rounds: int) -> int:
	var wrong := 0
	for r in rounds:
		for n: String in expected:
			var v: Variant = va.get(n)
			var e: Variant = expected[n]
			if typeof(v) != typeof(e):
				wrong += 1
			elif typeof(v) >= TYPE_PACKED_BYTE_ARRAY or typeof(v) == TYPE_ARRAY:
				wrong += int(v.size() != e.size())
			elif v != e:
				wrong += 1
	return wrong


func test_a_baked_resource_is_read_from_many_threads_at_once() -> void:
	var errors := Errors.new()
	var va := soldier_body()
	var expected := {}
	for p in va.get_property_list():
		if p.usage & PROPERTY_USAGE_STORAGE:
			expected[p.name] = va.get(p.name)
	check(expected.size() > 5, "the resource has stored properties: %s" % [expected.keys()])
	errors.take()
	var wrong := [0, 0, 0, 0]
	var task := func(i: int) -> void:
		wrong[i] = _read_all(va, expected, 300)
	var group := WorkerThreadPool.add_group_task(task, 4)
	var main_wrong := 0
	var main_rounds := 0
	while not WorkerThreadPool.is_group_task_completed(group):
		main_wrong += _read_all(va, expected, 1)
		main_rounds += 1
	WorkerThreadPool.wait_for_group_task_completion(group)
	var lines: Array[String] = errors.take()
	errors.stop()
	check_eq(wrong, [0, 0, 0, 0], "every worker read the same values")
	check_eq(main_wrong, 0, "and so did the main thread, over %d rounds meanwhile" % main_rounds)
	check_eq(lines, [] as Array[String], "no error or panic while the threads read")
	check(va.is_baked() and va.get_clip_count() > 0, "the resource is still whole")
