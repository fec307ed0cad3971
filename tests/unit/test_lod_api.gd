# VertexAnimation's LOD accessors: level count, meshes, and switch distances from the shared formula.
extends VatTest


func test_switch_distances_follow_the_calibration_at_any_image_height() -> void:
	var va := soldier_body()
	if va == null:
		return
	check(va.get_lod_count() >= 1, "a baked character has at least LOD0")
	# Two more levels (the LOD0 mesh again) check the formula independently of the LOD builder.
	va.lod_meshes = [va.mesh, va.mesh]
	va.lod_distances = PackedFloat32Array([93.3, 167.9])
	check_eq(va.get_lod_count(), 3, "three levels")
	check(va.get_lod_mesh(0) == va.mesh, "LOD0 is the baked mesh")
	for height in [720, 1440, 2160]:
		var d := va.get_lod_switch_distances(30.0, height)
		if check_eq(d.size(), 2, "two switch distances at %d px" % height):
			check_near(d[0], 93.3, 0.5, "LOD1 starts at 93.3 m at %d px" % height)
			check_near(d[1], 167.9, 0.5, "LOD2 starts at 167.9 m at %d px" % height)
	var narrow := va.get_lod_switch_distances(15.0, 1440)
	check(narrow[0] > 93.3 * 1.8, "a narrower view switches farther away")
	va.lod_distances = PackedFloat32Array([50.0, 100.0])
	check_near(va.get_lod_switch_distances(30.0, 1440)[1], 100.0, 0.01, "lod_distances moves the switches")


func test_bad_lod_queries_are_refused() -> void:
	var va := soldier_body()
	if va == null:
		return
	check(va.get_lod_mesh(-1) == null, "negative level refused")
	check(va.get_lod_mesh(va.get_lod_count()) == null, "level past the last refused")
	va.lod_meshes = [va.mesh]
	check_eq(va.get_lod_switch_distances(0.0, 1440).size(), 0, "zero fov refused")
	check_eq(va.get_lod_switch_distances(30.0, 0).size(), 0, "zero image height refused")
	va.lod_distances = PackedFloat32Array([100.0, 50.0])
	check_eq(va.get_lod_switch_distances(30.0, 1440).size(), 0, "decreasing distances refused")
	var empty := VertexAnimation.new()
	check_eq(empty.get_lod_count(), 0, "an unbaked resource has no levels")
	check_eq(empty.get_lod_switch_distances(30.0, 1440).size(), 0, "nor switch distances")
