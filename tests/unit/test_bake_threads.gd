# Baking from WorkerThreadPool tasks, as a user keeping the editor or game responsive might try.
# A bake poses the character in the running scene tree, which only the main thread may touch, so
# bake() off the main thread is refused with one error and ERR_UNAVAILABLE: never OK for nothing,
# never an abort, and the resources stay as they were.
extends VatTest

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
