# The crowd nodes' editor preview, in a real editor under the real renderer: the 3D editor
# viewport is captured with the preview off and on, and the character's pixels must appear where
# the camera projects the preview grid (cell spacing and column count as documented for
# `preview_count`), with more cells covering more of the view; the crowd clock runs only while
# a preview shows; the actor node draws every model on each preview actor.
extends RefCounted

var failures: PackedStringArray = []
var _plugin: EditorPlugin


func _init(plugin: EditorPlugin) -> void:
	_plugin = plugin


func _check(ok: bool, what: String) -> void:
	if not ok:
		failures.append(what)
		printerr("EDITOR CHECK FAIL: " + what)


func _frames(n: int) -> void:
	for i in n:
		await _plugin.get_tree().process_frame


func _capture(viewport: SubViewport) -> Image:
	await _frames(8)
	await RenderingServer.frame_post_draw
	var image := viewport.get_texture().get_image()
	image.convert(Image.FORMAT_RGB8)
	return image


## Pixels of `b` that differ from `a` by more than 10% in some channel: their count and bounds.
static func _changed(a: Image, b: Image) -> Dictionary:
	var count := 0
	var lo := Vector2i(1 << 30, 1 << 30)
	var hi := Vector2i(-1, -1)
	for y in a.get_height():
		for x in a.get_width():
			var d := a.get_pixel(x, y) - b.get_pixel(x, y)
			if maxf(absf(d.r), maxf(absf(d.g), absf(d.b))) > 0.1:
				count += 1
				lo = Vector2i(mini(lo.x, x), mini(lo.y, y))
				hi = Vector2i(maxi(hi.x, x), maxi(hi.y, y))
	return {"count": count, "rect": Rect2i(lo, hi - lo + Vector2i.ONE) if count > 0 else Rect2i()}


## Changed pixels of `b` against `a` inside `rect`.
static func _changed_in(a: Image, b: Image, rect: Rect2i) -> int:
	var n := 0
	var r := rect.intersection(Rect2i(Vector2i.ZERO, a.get_size()))
	for y in range(r.position.y, r.end.y):
		for x in range(r.position.x, r.end.x):
			var d := a.get_pixel(x, y) - b.get_pixel(x, y)
			if maxf(absf(d.r), maxf(absf(d.g), absf(d.b))) > 0.1:
				n += 1
	return n


## The documented grid: `count` cells, ceil(sqrt(count)) columns along +X, rows along +Z,
## centred on the node, the character's wider side and a quarter apart.
static func grid(count: int, bounds: AABB) -> Array[Vector3]:
	var spacing := maxf(bounds.size.x, bounds.size.z) * 1.25
	var columns := ceili(sqrt(float(count)))
	var rows := ceili(float(count) / columns)
	var out: Array[Vector3] = []
	for i in count:
		out.append(Vector3((i % columns - (columns - 1) / 2.0) * spacing, 0.0, (i / columns - (rows - 1) / 2.0) * spacing))
	return out


## The screen rectangle of `box` (in `node`'s space, moved by `offset`) seen by `camera`.
static func _screen_rect(camera: Camera3D, node: Node3D, box: AABB, offset: Vector3) -> Rect2i:
	var lo := Vector2(INF, INF)
	var hi := Vector2(-INF, -INF)
	for i in 8:
		var p := camera.unproject_position(node.to_global(box.get_endpoint(i) + offset))
		lo = lo.min(p)
		hi = hi.max(p)
	return Rect2i(Vector2i(lo.floor()), Vector2i((hi - lo).ceil()) + Vector2i.ONE)


func run(scene: Node, animation: VertexAnimation) -> void:
	print("EDITOR CHECK: the editor preview in the 3D viewport")
	EditorInterface.set_main_screen_editor("3D")
	EditorInterface.get_selection().clear()
	var viewport := EditorInterface.get_editor_viewport_3d(0)
	var camera := viewport.get_camera_3d()
	var single: Node3D = scene.get_node("Single")
	var actors: Node3D = scene.get_node("Actors")
	_check(single.preview_count == 1 and actors.preview_count == 1, "preview_count defaults to 1 (got %d, %d)" % [single.preview_count, actors.preview_count])
	var bounds := animation.get_clip_bounds(0)
	_check(bounds.size.length() > 0.0, "the baked clip has bounds")
	# Both nodes in front of the editor camera, far enough for a 3 x 3 grid to fit the view.
	var extent := maxf(maxf(bounds.size.x, bounds.size.z) * 1.25 * 3.0, bounds.size.y)
	var distance := extent / tan(deg_to_rad(camera.fov) / 2.0)
	var centre := camera.global_position - camera.global_basis.z * distance
	for n: Node3D in [single, actors]:
		n.global_position = centre - bounds.get_center()
	single.preview_count = 0
	actors.preview_count = 0
	var none := await _capture(viewport)
	var t0: float = single.time
	await _frames(10)
	_check(single.time == t0, "without a preview the clock stands still in the editor (%f -> %f)" % [t0, single.time])
	_check(single.get_instance_count() == 0, "preview_count 0 draws nothing (%d instances)" % single.get_instance_count())

	single.preview_count = 1
	var one := await _capture(viewport)
	var changed_one := _changed(none, one)
	_check(single.get_instance_count() == 1, "preview_count 1 shows one instance (%d)" % single.get_instance_count())
	_check(changed_one.count >= 50, "one preview instance appears in the viewport (%d pixels changed)" % changed_one.count)
	var cell := _screen_rect(camera, single, bounds, Vector3.ZERO)
	_check(_changed_in(none, one, cell) >= changed_one.count * 9 / 10, "the instance's pixels lie where its bounds project (%s of %d inside %s)" % [_changed_in(none, one, cell), changed_one.count, cell])
	var t1: float = single.time
	await _frames(10)
	_check(single.time > t1, "while the preview shows, the clock runs in the editor (%f -> %f)" % [t1, single.time])

	single.preview_count = 4
	var four := await _capture(viewport)
	var changed_four := _changed(none, four)
	_check(single.get_instance_count() == 4, "preview_count 4 shows four instances (%d)" % single.get_instance_count())
	_check(changed_four.count > changed_one.count * 2, "four instances cover more than twice one's pixels (%d vs %d)" % [changed_four.count, changed_one.count])
	var cells := grid(4, bounds)
	var union := Rect2i()
	for i in cells.size():
		var r := _screen_rect(camera, single, bounds, cells[i])
		union = r if i == 0 else union.merge(r)
		_check(_changed_in(none, four, r) >= 20, "grid cell %d (%s) shows the character" % [i, cells[i]])
	_check(union.grow(2).encloses(changed_four.rect), "the preview stays within the 2 x 2 grid's extent (%s in %s)" % [changed_four.rect, union])
	print("EDITOR CHECK: preview pixels changed: 1 instance %d in %s, 4 instances %d in %s (grid cells project into %s)" % [changed_one.count, changed_one.rect, changed_four.count, changed_four.rect, union])
	_check(changed_four.rect.size.x > changed_one.rect.size.x, "the grid is wider than one instance (%d vs %d px)" % [changed_four.rect.size.x, changed_one.rect.size.x])

	var names: PackedStringArray = animation.clip_names
	single.preview_clip = names[names.size() - 1]
	await _frames(5)
	_check(single.get_instance_count() == 4, "a clip named in preview_clip keeps the preview (%d)" % single.get_instance_count())
	single.preview_clip = ""

	single.preview_count = 0
	actors.models = [animation, animation] as Array[VertexAnimation]
	actors.preview_count = 2
	var pair := await _capture(viewport)
	_check(actors.get_actor_count() == 2, "the actor preview shows 2 actors (%d)" % actors.get_actor_count())
	for m in 2:
		_check(actors.get_model_instance_count(m) == 2, "every preview actor carries model %d (%d)" % [m, actors.get_model_instance_count(m)])
	_check(_changed(none, pair).count >= 50, "the actor preview appears in the viewport")
	# Left showing for the save that follows.
	single.preview_count = 4
	await _frames(5)
