# Crowd nodes keep drawing through what used to make them vanish: a reparent, bad speeds, bulk
# calls with one bad entry. Each check compares captures under the real renderer.
extends VatTest



func _stage() -> void:
	stage(Vector3(1.5, 1.6, 4.5), Vector3(1.5, 0.8, 0))


## Two images that must be the same picture (lavapipe renders are deterministic).
func _check_same(label: String, a: Image, b: Image) -> void:
	var d := image_diff(a, b)
	print("    %s: mean %.3f/255, max %d" % [label, d["mean_abs"], d["max"]])
	if not check(d["mean_abs"] <= 0.05 and d["frac_over_32"] == 0.0, "%s: same picture (mean %.3f/255, %.4f%% over 32)" % [label, d["mean_abs"], d["frac_over_32"] * 100.0]):
		save_png(a, "robust_%s_expected" % label)
		save_png(b, "robust_%s_got" % label)


## Checks that `img` shows something beyond the empty stage `empty`.
func _check_drawn(label: String, empty: Image, img: Image) -> void:
	var d := image_diff(empty, img)
	check(d["frac_over_32"] > 0.01, "%s: the crowd is drawn (%.3f%% of pixels differ from the empty stage)" % [label, d["frac_over_32"] * 100.0])


## A paused AnimatedMeshInstance of three soldiers in a row under `parent`, at time `t`.
func _retained(parent: Node, t := 0.4) -> AnimatedMeshInstance:
	var m := AnimatedMeshInstance.new()
	m.animation = soldier_body(1)
	m.paused = true
	parent.add_child(m)
	m.time = 0.0
	var walk := soldier_body(1).find_clip("walk")
	for i in 3:
		m.add_instance(Transform3D(Basis.IDENTITY, Vector3(1.5 * i, 0, 0)), walk)
	m.time = t
	m.submit()
	return m


func test_crowds_still_draw_after_a_reparent() -> void:
	_stage()
	var empty := await capture()
	var a := Node3D.new()
	var b := Node3D.new()
	root.add_child(a)
	root.add_child(b)
	var m := _retained(a)
	var before := await capture()
	_check_drawn("retained before", empty, before)
	m.reparent(b)
	await frames(1)
	var moved := await capture()
	_check_same("retained after reparent()", before, moved)
	check_eq(m.get_instance_count(), 3, "instances kept")
	b.remove_child(m)
	a.add_child(m)
	await frames(1)
	_check_same("retained after remove_child + add_child", before, await capture())
	m.queue_free()
	await frames(1)

	var army := AnimatedActorMeshInstance.new()
	army.models = [soldier_body(1)] as Array[VertexAnimation]
	army.paused = true
	a.add_child(army)
	army.time = 0.4
	army.begin()
	for i in 3:
		army.add_actor(Transform3D(Basis.IDENTITY, Vector3(1.5 * i, 0, 0)), soldier_body(1).find_clip("walk"), 0.0, 1.0)
		army.add_model(0)
	army.submit()
	var army_before := await capture()
	_check_drawn("actors before", empty, army_before)
	army.reparent(b)
	await frames(1)
	_check_same("actors after reparent() (no refill)", army_before, await capture())
	b.remove_child(army)
	a.add_child(army)
	army.submit()
	await frames(1)
	_check_same("actors after remove_child + add_child", army_before, await capture())


func test_bad_speeds_leave_the_crowd_drawn() -> void:
	_stage()
	var m := _retained(root)
	var before := await capture()
	var attack := soldier_body(1).find_clip("attack")
	for speed: float in [NAN, INF, 1e30, 65520.0]:
		m.play_animation(1, attack, 0.0, speed)
		m.play_animations(PackedInt32Array([0, 2]), attack, 0.0, speed)
		m.submit()
		_check_same("retained speed %s" % speed, before, await capture())
	m.time = NAN
	m.submit()
	_check_same("retained time NAN", before, await capture())

	m.queue_free()
	var army := AnimatedActorMeshInstance.new()
	army.models = [soldier_body(1)] as Array[VertexAnimation]
	army.paused = true
	root.add_child(army)
	army.time = 0.4
	var walk := soldier_body(1).find_clip("walk")
	army.begin()
	for i in 3:
		army.add_actor(Transform3D(Basis.IDENTITY, Vector3(1.5 * i, 0, 0)), walk, 0.0, 1.0)
		army.add_model(0)
	army.submit()
	var actors := await capture()
	_check_same("actors match the retained crowd", before, actors)
	army.begin()
	for i in 3:
		# A bad speed or start time is refused, so the actor is left out visibly, never kept
		# as an invisible record.
		var speed := 65520.0 if i == 1 else 1.0
		var start := 1e300 if i == 2 else 0.0
		if army.add_actor(Transform3D(Basis.IDENTITY, Vector3(1.5 * i, 0, 0)), walk, start, speed) >= 0:
			army.add_model(0)
	army.submit()
	check_eq(army.get_actor_count(), 1, "the two bad actors were refused")


func test_a_refused_bulk_call_changes_nothing_even_later() -> void:
	_stage()
	var m := _retained(root)
	var before := await capture()
	var attack := soldier_body(1).find_clip("attack")
	m.play_animations(PackedInt32Array([0, 999, 2]), attack, 0.0, 1.0)
	m.submit()
	_check_same("after the refused call", before, await capture())
	# An unrelated edit uploads the crowd again: instance 0 must still walk.
	m.set_instance_tint(1, Color.WHITE)
	m.submit()
	_check_same("after a later unrelated edit", before, await capture())
	# A good bulk call is drawn at the next submit, as a fresh crowd playing the same.
	m.play_animations(PackedInt32Array([0, 2]), attack, 0.0, 1.0)
	m.time = 0.7
	m.submit()
	var got := await capture()
	var d := image_diff(before, got)
	check(d["frac_over_32"] > 0.005, "the good bulk call is drawn (%.3f%% of pixels changed)" % (d["frac_over_32"] * 100.0))
	m.queue_free()
	await frames(1)
	var fresh := AnimatedMeshInstance.new()
	fresh.animation = soldier_body(1)
	fresh.paused = true
	root.add_child(fresh)
	fresh.time = 0.0
	var walk := soldier_body(1).find_clip("walk")
	for i in 3:
		fresh.add_instance(Transform3D(Basis.IDENTITY, Vector3(1.5 * i, 0, 0)), walk)
	fresh.time = 0.4
	fresh.play_animation(0, attack)
	fresh.play_animation(2, attack)
	fresh.time = 0.7
	fresh.submit()
	_check_same("a good bulk call vs a fresh crowd", await capture(), got)
