# The extension loads and registers its classes, and the test harness itself works.
extends VatTest


func test_extension_classes_are_registered() -> void:
	for c in ["VertexAnimation", "AnimatedMeshInstance", "AnimatedActorMeshInstance", "VertexAnimationBaker"]:
		check(ClassDB.class_exists(c), "class %s is registered (extension loaded?)" % c)
	if ClassDB.class_exists("VertexAnimation"):
		var va: Object = ClassDB.instantiate("VertexAnimation")
		check(va is Resource, "VertexAnimation is a Resource")


func test_harness_checks() -> void:
	check_eq(1, 1.0, "int and float compare by value")
	check_near(0.1 + 0.2, 0.3, 1e-9, "near")
	check(root != null and root.is_inside_tree(), "each test gets a root inside the tree")
	var n := Node3D.new()
	root.add_child(n)
	await frames(2)
	check(is_instance_valid(n), "nodes under root live until the test ends")
