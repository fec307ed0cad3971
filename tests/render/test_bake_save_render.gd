# Saving and loading a bake under the real renderer: the variation layers come back, also after
# a resource loaded from a file (which keeps no copy of the images: the renderer has them) is
# saved again.
extends VatTest

const DIR := "user://bake_save_render"


func test_variations_survive_save_load_and_save_again() -> void:
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DIR))
	var textures: Array[Texture2D] = []
	for c in [Color.RED, Color.BLUE, Color.GREEN]:
		var img := Image.create(16, 16, false, Image.FORMAT_RGBA8)
		img.fill(c)
		textures.append(ImageTexture.create_from_image(img))
	var va := VertexAnimation.new()
	va.source_scene = load("res://generated/soldier.tscn")
	va.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	va.lod_enabled = false
	va.texture_variations = textures
	check_eq(va.bake(), OK, "bake with three variations")
	var first := DIR.path_join("first.res")
	var second := DIR.path_join("second.res")
	check_eq(va.save_to(first), OK, "save the bake")
	var loaded: VertexAnimation = ResourceLoader.load(first, "", ResourceLoader.CACHE_MODE_IGNORE)
	check_eq(loaded.variations.get_layers(), 3, "three layers after a load")
	check_eq(loaded.save_to(second), OK, "save the loaded resource again")
	var again: VertexAnimation = ResourceLoader.load(second, "", ResourceLoader.CACHE_MODE_IGNORE)
	check_eq(again.variations.get_layers(), 3, "three layers after a second save and load")
	var blue: Image = again.variations.get_layer_data(1)
	check(blue != null and blue.get_pixel(8, 8).is_equal_approx(Color.BLUE), "layer 1 is still the blue one: %s" % [blue.get_pixel(8, 8) if blue else null])
	for f in DirAccess.get_files_at(DIR):
		DirAccess.remove_absolute(ProjectSettings.globalize_path(DIR.path_join(f)))
	DirAccess.remove_absolute(ProjectSettings.globalize_path(DIR))
