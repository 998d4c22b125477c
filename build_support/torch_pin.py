"""scikit-build-core metadata provider: the wheel depends on exactly the torch it
was built against (the C++ ABI of libct3d.so changes between torch releases)."""


def dynamic_metadata(field, settings, project):
    if field != "dependencies":
        raise RuntimeError("torch_pin provides the dependencies field only")
    import torch

    release = torch.__version__.split("+")[0]  # "2.14.1+cu130" -> "2.14.1"
    return [f"torch=={release}"]
