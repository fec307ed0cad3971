# AnimatedActorMeshInstance's playback queries (get_actor_clip_time, get_finished_actors): computed from the crowd
# clock and the clip table, so headless runs them for real.
extends VatTest


func _crowd() -> AnimatedActorMeshInstance:
	var a := AnimatedActorMeshInstance.new()
	a.models = [soldier_body()] as Array[VertexAnimation]
	a.paused = true  # the test drives the clock
	root.add_child(a)
	return a


## The soldier's non-looped death clip and a looped one.
func _clips() -> Dictionary:
	var va := soldier_body()
	var die := va.find_clip("die")
	var walk := va.find_clip("walk")
	check(die >= 0 and not va.is_clip_looped(die), "the soldier has a non-looped 'die' clip")
	check(walk >= 0 and va.is_clip_looped(walk), "the soldier has a looped 'walk' clip")
	return {"die": die, "walk": walk, "die_length": va.get_clip_duration(die), "walk_length": va.get_clip_duration(walk)}


## A current camera 10 m in front of the origin, looking at it (the crowd frame culls against it).
func _camera() -> void:
	var cam := Camera3D.new()
	root.add_child(cam)
	cam.look_at_from_position(Vector3(0, 2, 10), Vector3(0, 1, 0))
	cam.current = true


## One immediate-mode frame at crowd time `t`: actor 0 walks since 0, actor 1 plays `clip1` since `start1`, actor 2
## walks; returns the finished list after the submit.
func _frame(a: AnimatedActorMeshInstance, t: float, clip1: int, start1: float, walk: int) -> PackedInt32Array:
	a.time = t
	a.begin()
	a.add_actor(Transform3D.IDENTITY, walk, 0.0)
	a.add_actor(Transform3D.IDENTITY, clip1, start1)
	a.add_actor(Transform3D.IDENTITY, walk, 0.0)
	a.submit()
	return a.get_finished_actors()


func test_a_death_is_listed_at_the_submit_after_its_end_once() -> void:
	var c := _clips()
	var a := _crowd()
	var end: float = 1.0 + c.die_length
	check_eq(_frame(a, 0.5, c.die, 1.0, c.walk), PackedInt32Array(), "before the death starts")
	check_eq(_frame(a, end - 0.05, c.die, 1.0, c.walk), PackedInt32Array(), "just before its end")
	check_eq(_frame(a, end + 0.02, c.die, 1.0, c.walk), PackedInt32Array([1]), "the submit after its end")
	check_eq(_frame(a, end + 0.05, c.die, 1.0, c.walk), PackedInt32Array(), "not twice")
	check_eq(_frame(a, end + 10.0, c.die, 1.0, c.walk), PackedInt32Array(), "not later")


func test_a_new_clip_before_the_end_cancels_it() -> void:
	var c := _clips()
	var a := _crowd()
	var end: float = 1.0 + c.die_length
	_frame(a, 1.2, c.die, 1.0, c.walk)
	check_eq(_frame(a, end - 0.1, c.walk, end - 0.1, c.walk), PackedInt32Array(), "given a walk before the end")
	check_eq(_frame(a, end + 1.0, c.walk, end - 0.1, c.walk), PackedInt32Array(), "never listed for the death")


func test_bulk_frames_and_pauses() -> void:
	var c := _clips()
	var a := _crowd()
	var positions := PackedVector3Array([Vector3.ZERO, Vector3.ONE, Vector3(2, 0, 0)])
	var yaws := PackedFloat32Array([0.0, 0.0, 0.0])
	var clips := PackedInt32Array([c.die, c.walk, c.die])
	var starts := PackedFloat32Array([0.0, 0.0, 2.0])
	var ends := [c.die_length, 2.0 + c.die_length]
	var lists: Array[PackedInt32Array] = []
	for t: float in [0.1, ends[0] + 0.01, ends[0] + 0.01, ends[1] + 0.01]:
		a.time = t
		a.set_actors(positions, yaws, clips, starts)
		a.submit()
		lists.append(a.get_finished_actors())
	check_eq(lists[0], PackedInt32Array(), "none ended yet")
	check_eq(lists[1], PackedInt32Array([0]), "actor 0's death ended")
	check_eq(lists[2], PackedInt32Array(), "paused clock: nothing new")
	check_eq(lists[3], PackedInt32Array([2]), "actor 2's death ended")


func test_clip_time_follows_the_clock() -> void:
	var c := _clips()
	var a := _crowd()
	a.time = 10.0
	a.begin()
	a.add_actor(Transform3D.IDENTITY, c.walk, 9.0, 0.5)
	a.add_actor(Transform3D.IDENTITY, c.die, 9.0, 1.0)
	a.add_actor(Transform3D.IDENTITY, c.die, 0.0, 1.0)
	check_near(a.get_actor_clip_time(0), fmod(0.5, c.walk_length), 1e-4, "looped, half speed")
	check_near(a.get_actor_clip_time(1), minf(1.0, c.die_length), 1e-4, "one second into the death")
	check_near(a.get_actor_clip_time(2), c.die_length, 1e-4, "held at the end")
	a.time = 9.0 + 3.0 * c.walk_length / 0.5 + 0.2
	check_near(a.get_actor_clip_time(0), 0.1, 1e-3, "wrapped after three loops")


func test_bad_actor_ids_get_one_error() -> void:
	var a := _crowd()
	a.begin()
	a.add_actor(Transform3D.IDENTITY, 0)
	check_eq(a.get_actor_clip_time(1), -1.0, "past this frame's actors")
	check_eq(a.get_actor_clip_time(-1), -1.0, "negative")
	check(a.get_actor_clip_time(0) >= 0.0, "a good id still answers")
	check_eq(a.get_finished_actors(), PackedInt32Array(), "nothing submitted yet")


func test_retained_instance_clip_time() -> void:
	var c := _clips()
	var m := AnimatedMeshInstance.new()
	m.animation = soldier_body()
	m.paused = true
	root.add_child(m)
	m.time = 5.0
	var id := m.add_instance(Transform3D.IDENTITY, c.die)
	m.time = 5.25
	check_near(m.get_instance_clip_time(id), 0.25, 1e-4, "a quarter second in")
	m.play_animation(id, c.walk, 0.0, 2.0)
	m.time = 5.5
	check_near(m.get_instance_clip_time(id), fmod(0.5, c.walk_length), 1e-4, "walking at double speed")
	m.time = 100.0
	m.play_animation(id, c.die)
	m.time = 100.0 + c.die_length + 3.0
	check_near(m.get_instance_clip_time(id), c.die_length, 1e-4, "held at the death's end")
	check_eq(m.get_instance_clip_time(id + 1), -1.0, "unknown id")


func test_placements_and_clip_switches_keep_everything_else() -> void:
	var c := _clips()
	var a := _crowd()
	_camera()
	a.time = 1.0
	a.set_actors(PackedVector3Array([Vector3.ZERO, Vector3(1, 0, 0), Vector3(2, 0, 0)]),
		PackedFloat32Array([0, 0, 0]), PackedInt32Array([c.walk, c.walk, c.walk]),
		PackedFloat32Array([0.5, 0.5, 0.5]))
	a.set_model_actors(0, PackedInt32Array([0, 1, 2]))
	a.submit()
	check_eq(a.get_lod_instance_count(0, 0), 3, "three in view")
	# Move actor 1 behind the camera: its clip and time stay.
	a.set_actor_placements(PackedVector4Array([Vector4(0, 0, 0, 1), Vector4(0, 0, 30, 0), Vector4(2, 0, 0, 0)]))
	a.submit()
	check_eq(a.get_lod_instance_count(0, 0), 2, "the moved actor is culled")
	check_near(a.get_actor_clip_time(1), fmod(0.5, c.walk_length), 1e-4, "its clip time is kept")
	# Actor 2 dies from t = 1: it is listed once its death ends; actor 0 keeps walking.
	a.set_actor_clips(PackedInt32Array([2]), PackedInt32Array([c.die]), PackedFloat32Array([1.0]))
	check_near(a.get_actor_clip_time(0), fmod(0.5, c.walk_length), 1e-4, "actor 0 still walks")
	a.submit()
	check_eq(a.get_finished_actors(), PackedInt32Array(), "not dead yet")
	a.time = 1.0 + c.die_length + 0.01
	a.submit()
	check_eq(a.get_finished_actors(), PackedInt32Array([2]), "the switched clip ends on time")
	check_near(a.get_actor_clip_time(2), c.die_length, 1e-4, "held at its end")


## The battle frame's calls (set_actor_placements, set_actor_clips, set_actor_blends) write the placement texture and
## the switched states alone, leaving the records behind: every other call that writes actors (add_actor after
## them, begin(), set_actors) and the CPU frame must still see every move, and a begin() between them must drop
## what they named for actors that are gone. 40 actors (three near the camera, the rest far behind it), so a switch
## of one or two is few enough to be handled alone.
func test_moves_and_clip_switches_mix_with_every_other_call() -> void:
	var c := _clips()
	var a := _crowd()
	_camera()
	a.time = 1.0
	var n := 40
	var far := func(i: int) -> Vector4: return Vector4(i, 0, 200, 0)
	# The placements of every actor: the far ones where they are, the first ones given.
	var moved := func(first: Array) -> PackedVector4Array:
		var out := PackedVector4Array()
		for i in n:
			out.append(first[i] if i < first.size() else far.call(i))
		return out
	var positions := PackedVector3Array()
	var walks := PackedInt32Array()
	var zeros := PackedFloat32Array()
	for i in n:
		var p: Vector4 = Vector4(i, 0, 0, 0) if i < 3 else far.call(i)
		positions.append(Vector3(p.x, p.y, p.z))
		walks.append(c.walk)
		zeros.append(0.0)
	a.set_actors(positions, zeros, walks, zeros)
	a.set_model_actors(0, PackedInt32Array(range(n)))
	a.submit()
	check_eq(a.get_lod_instance_count(0, 0), 3, "three in view")
	# Two frames of moves with no other write between: actor 1, then actor 2 too, leave the view.
	a.set_actor_placements(moved.call([Vector4(0, 0, 0, 0), Vector4(0, 0, 30, 0), Vector4(2, 0, 0, 0)]))
	a.submit()
	check_eq(a.get_lod_instance_count(0, 0), 2, "actor 1 moved out")
	a.set_actor_placements(moved.call([Vector4(0, 0, 0, 1), Vector4(0, 0, 30, 0), Vector4(0, 0, 40, 0)]))
	a.set_actor_clips(PackedInt32Array([0]), PackedInt32Array([c.die]), PackedFloat32Array([1.0]))
	a.set_actor_blends(PackedInt32Array([0]), PackedInt32Array([c.walk]), PackedFloat32Array([0.0]),
		PackedFloat32Array([0.2]))
	# An actor added after the moves joins records that must hold them.
	var added := a.add_actor(Transform3D(Basis(), Vector3(1, 0, 0)), c.walk, 0.0)
	a.add_model(0)
	a.submit()
	check_eq(added, n, "appended after the others")
	check_eq(a.get_lod_instance_count(0, 0), 2, "actor 0 and the added one in view; 1 and 2 stay where they moved")
	check_near(a.get_actor_clip_time(0), 0.0, 1e-4, "actor 0's switch to its death is kept")
	# Moves and switches, then begin(): the new frame's actors replace them whole.
	n += 1
	a.set_actor_placements(moved.call([]))
	a.set_actor_clips(PackedInt32Array([1, 3]), PackedInt32Array([c.die, c.die]), PackedFloat32Array([1.0, 1.0]))
	a.begin()
	a.add_actor(Transform3D.IDENTITY, c.walk, 0.0)
	a.add_model(0)
	a.submit()
	check_eq(a.get_lod_instance_count(0, 0), 1, "the new frame's one actor, in view")
	# The bulk calls again, a switch, then an empty frame: the switched actor is gone.
	n = 40
	a.set_actors(positions, zeros, walks, zeros)
	a.set_model_actors(0, PackedInt32Array(range(n)))
	a.submit()
	a.set_actor_clips(PackedInt32Array([0]), PackedInt32Array([c.die]), PackedFloat32Array([1.0]))
	a.begin()
	a.submit()
	check_eq(a.get_actor_count(), 0, "no actors")
	check_eq(a.get_lod_instance_count(0, 0), 0, "nothing drawn")
	# The bulk calls again from scratch, moved back and forth, a switch every frame.
	a.set_actors(positions, zeros, walks, zeros)
	a.set_model_actors(0, PackedInt32Array(range(n)))
	a.submit()
	for step in 4:
		var z := 60.0 if step % 2 == 1 else 0.0
		a.set_actor_placements(moved.call([Vector4(0, 0, z, 0), Vector4(1, 0, z, 0), Vector4(2, 0, 0, 0)]))
		a.set_actor_clips(PackedInt32Array([step]), PackedInt32Array([c.die]), PackedFloat32Array([1.0]))
		a.submit()
		check_eq(a.get_lod_instance_count(0, 0), 1 if step % 2 == 1 else 3, "step %d: back and forth" % step)


## A move writes the placement texture itself; a whole write after it (set_actors with the same placements) splits
## the records into texels that already hold them, and the texture must still go up that submit.
func test_a_move_then_a_whole_write_still_sends_the_moved_placements() -> void:
	var c := _clips()
	var a := _crowd()
	a.time = 1.0
	var n := 40
	var positions := PackedVector3Array()
	var yaws := PackedFloat32Array()
	var walks := PackedInt32Array()
	var zeros := PackedFloat32Array()
	var moved := PackedVector4Array()
	for i in n:
		positions.append(Vector3(i, 0, 0))
		yaws.append(0.5)
		walks.append(c.walk)
		zeros.append(0.0)
		moved.append(Vector4(i, 0, 1, 0.5))
	a.set_actors(positions, yaws, walks, zeros)
	a.set_model_actors(0, PackedInt32Array(range(n)))
	a.submit()
	a.submit()
	check_eq(a.get_last_submit_bytes(), 0, "nothing changed, nothing sent")
	a.set_actor_placements(moved)
	for i in n:
		positions[i] = Vector3(moved[i].x, moved[i].y, moved[i].z)
	a.set_actors(positions, yaws, walks, zeros)
	a.submit()
	# One row of 4,096 placement texels (16 bytes each) holds the 40 actors.
	check(a.get_last_submit_bytes() >= 4096 * 16, "the moved placements went up (%d bytes)" % a.get_last_submit_bytes())


func test_bad_placements_and_clip_switches_change_nothing() -> void:
	var c := _clips()
	var a := _crowd()
	a.time = 2.0
	a.set_actors(PackedVector3Array([Vector3.ZERO, Vector3.ONE]), PackedFloat32Array([0, 0]),
		PackedInt32Array([c.walk, c.walk]), PackedFloat32Array([1.5, 1.5]))
	var t0 := a.get_actor_clip_time(1)
	a.set_actor_placements(PackedVector4Array([Vector4.ZERO]))  # one for two actors
	a.set_actor_placements(PackedVector4Array([Vector4.ZERO, Vector4(0, NAN, 0, 0)]))
	a.set_actor_clips(PackedInt32Array([1, 2]), PackedInt32Array([c.die, c.die]), PackedFloat32Array([2.0, 2.0]))
	a.set_actor_clips(PackedInt32Array([1]), PackedInt32Array([999]), PackedFloat32Array([2.0]))
	a.set_actor_clips(PackedInt32Array([1]), PackedInt32Array([c.die]), PackedFloat32Array([INF]))
	a.set_actor_clips(PackedInt32Array([1]), PackedInt32Array([c.die]), PackedFloat32Array())
	check_near(a.get_actor_clip_time(1), t0, 1e-6, "actor 1 still walks from 1.5")
	a.full_transform = true
	a.set_actors(PackedVector3Array([Vector3.ZERO]), PackedFloat32Array([0]), PackedInt32Array(), PackedFloat32Array())
	a.set_actor_placements(PackedVector4Array([Vector4.ZERO]))  # needs yaw records
	check_eq(a.get_actor_count(), 1, "the frame's actors are kept")
