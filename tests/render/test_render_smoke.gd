# The real renderer draws: an unshaded red MultiMesh box lands where the camera says it should.
extends VatTest

const BOX_AT := Vector3(-2.5, 0.0, 0.0)  # second instance; the first sits at the origin
const BACKGROUND := Color(0.3, 0.3, 0.3)  # Godot's default clear colour


func test_multimesh_box_pixels() -> void:
	var cam := Camera3D.new()
	cam.position = Vector3(0, 0, 5)
	cam.fov = 75.0
	root.add_child(cam)
	cam.make_current()

	var mat := StandardMaterial3D.new()
	mat.shading_mode = BaseMaterial3D.SHADING_MODE_UNSHADED
	mat.albedo_color = Color.RED
	var box := BoxMesh.new()
	box.material = mat
	var mm := MultiMesh.new()
	mm.transform_format = MultiMesh.TRANSFORM_3D
	mm.mesh = box
	mm.instance_count = 2
	mm.set_instance_transform(0, Transform3D.IDENTITY)
	mm.set_instance_transform(1, Transform3D(Basis.IDENTITY, BOX_AT))
	var mmi := MultiMeshInstance3D.new()
	mmi.multimesh = mm
	root.add_child(mmi)

	var img := await capture()
	save_png(img, "render_smoke")
	check_eq(img.get_size(), Vector2i(640, 480), "viewport size")
	var w := img.get_width()
	var h := img.get_height()
	check_color(img.get_pixel(w / 2, h / 2), Color.RED, 0.02, "centre pixel is the red box at the origin")
	# Project BOX_AT with the camera instead of hard-coding pixels.
	var p := cam.unproject_position(BOX_AT)
	check_color(img.get_pixel(int(p.x), int(p.y)), Color.RED, 0.02, "second instance at %s" % p)
	check_color(img.get_pixel(w / 2, h / 8), BACKGROUND, 0.02, "background above the boxes")
	check_color(img.get_pixel(w - 20, h / 2), BACKGROUND, 0.02, "background right of the boxes")
