## The extension's rows of bench_calls.gd, statically typed as a user's script would be. Loaded only when the
## extension's classes exist, so bench_calls.gd itself still parses without them.
extends RefCounted

var bench := VatCrowdBench.new()
var crowd: AnimatedActorMeshInstance
var models: Array[VertexAnimation] = []


## A crowd node with one box model baked from a generated scene; false if the bake failed.
func make_crowd(parent: Node) -> bool:
	var scene := Node3D.new()
	var mesh := MeshInstance3D.new()
	mesh.name = "Box"
	mesh.mesh = BoxMesh.new()
	scene.add_child(mesh)
	mesh.owner = scene
	var player := AnimationPlayer.new()
	player.name = "AnimationPlayer"
	scene.add_child(player)
	player.owner = scene
	var lib := AnimationLibrary.new()
	var anim := Animation.new()
	anim.length = 1.0
	var track := anim.add_track(Animation.TYPE_POSITION_3D)
	anim.track_set_path(track, NodePath("Box"))
	anim.position_track_insert_key(track, 0.0, Vector3.ZERO)
	anim.position_track_insert_key(track, 1.0, Vector3.UP)
	lib.add_animation("move", anim)
	player.add_animation_library("", lib)
	var packed := PackedScene.new()
	packed.pack(scene)
	scene.free()
	var va := VertexAnimation.new()
	va.source_scene = packed
	if va.bake() != OK:
		printerr("bench_calls: baking the box failed; the crowd rows are skipped")
		return false
	models = [va]
	crowd = AnimatedActorMeshInstance.new()
	crowd.models = models
	parent.add_child(crowd)
	return true


func free_crowd() -> void:
	if crowd != null:
		crowd.queue_free()
		crowd = null


## [name, loop] pairs; each loop makes `n` calls and returns the microseconds it took.
func rows(n: int, with_crowd: bool) -> Array:
	var out := [
		["noop_static", func() -> int: return _static(n)],
		["noop_ref", func() -> int: return _ref(n)],
		["noop_mut", func() -> int: return _mut(n)],
		["noop_guarded", func() -> int: return _guarded(n)],
		["noop_args", func() -> int: return _args(n)],
		["noop_opt_defaults", func() -> int: return _opt_defaults(n)],
		["noop_opt_all", func() -> int: return _opt_all(n)],
		["noop_mut_untyped", func() -> int: return _mut_untyped(n)],
		["noop_args_untyped", func() -> int: return _args_untyped(n)],
	]
	if with_crowd:
		out.append_array([
			["add_actor", func() -> int: return _add_actor(n)],
			["add_model", func() -> int: return _add_model(n, false)],
			["add_model_all", func() -> int: return _add_model(n, true)],
			["add_equipped_actor_3", func() -> int: return _add_equipped_actor(n)],
			["add_actor_untyped", func() -> int: return _add_actor_untyped(n)],
		])
	return out


func _static(n: int) -> int:
	var t := Time.get_ticks_usec()
	for i in n:
		VatCrowdBench.noop_static()
	return Time.get_ticks_usec() - t


func _ref(n: int) -> int:
	var b := bench
	var t := Time.get_ticks_usec()
	for i in n:
		b.noop_ref()
	return Time.get_ticks_usec() - t


func _mut(n: int) -> int:
	var b := bench
	var t := Time.get_ticks_usec()
	for i in n:
		b.noop_mut()
	return Time.get_ticks_usec() - t


func _guarded(n: int) -> int:
	var b := bench
	var t := Time.get_ticks_usec()
	for i in n:
		b.noop_guarded()
	return Time.get_ticks_usec() - t


func _args(n: int) -> int:
	var b := bench
	var xf := Transform3D(Basis(), Vector3(1, 2, 3))
	var t := Time.get_ticks_usec()
	for i in n:
		b.noop_args(xf, 1, 0.5, 1.0)
	return Time.get_ticks_usec() - t


func _opt_defaults(n: int) -> int:
	var b := bench
	var t := Time.get_ticks_usec()
	for i in n:
		b.noop_opt(0)
	return Time.get_ticks_usec() - t


func _opt_all(n: int) -> int:
	var b := bench
	var t := Time.get_ticks_usec()
	for i in n:
		b.noop_opt(0, 0, Color.WHITE)
	return Time.get_ticks_usec() - t


func _mut_untyped(n: int) -> int:
	var b: Variant = bench
	var t := Time.get_ticks_usec()
	for i in n:
		b.noop_mut()
	return Time.get_ticks_usec() - t


func _args_untyped(n: int) -> int:
	var b: Variant = bench
	var xf := Transform3D(Basis(), Vector3(1, 2, 3))
	var t := Time.get_ticks_usec()
	for i in n:
		b.noop_args(xf, 1, 0.5, 1.0)
	return Time.get_ticks_usec() - t


func _add_actor(n: int) -> int:
	var c := crowd
	var xf := Transform3D(Basis(), Vector3(1, 2, 3))
	c.begin()
	var t := Time.get_ticks_usec()
	for i in n:
		c.add_actor(xf, 0, 0.5, 1.0, Color())
	var took := Time.get_ticks_usec() - t
	return took


## add_equipped_actor with a set of three models (the one box model thrice): an actor and its models in one call.
func _add_equipped_actor(n: int) -> int:
	var c := crowd
	var xf := Transform3D(Basis(), Vector3(1, 2, 3))
	c.set_equipment(0, PackedInt32Array([0, 0, 0]))
	c.begin()
	var t := Time.get_ticks_usec()
	for i in n:
		c.add_equipped_actor(xf, 0, 0, 0.5, 1.0, Color())
	return Time.get_ticks_usec() - t


func _add_model(n: int, all_args: bool) -> int:
	var c := crowd
	c.begin()
	c.add_actor(Transform3D(), 0, 0.0, 1.0, Color())
	var t := Time.get_ticks_usec()
	if all_args:
		for i in n:
			c.add_model(0, 0, Color.WHITE)
	else:
		for i in n:
			c.add_model(0)
	return Time.get_ticks_usec() - t


func _add_actor_untyped(n: int) -> int:
	var c: Variant = crowd
	var xf := Transform3D(Basis(), Vector3(1, 2, 3))
	c.begin()
	var t := Time.get_ticks_usec()
	for i in n:
		c.add_actor(xf, 0, 0.5, 1.0, Color())
	return Time.get_ticks_usec() - t
