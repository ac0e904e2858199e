"""Write outputs whole or not at all: into a temporary file beside the target, then rename over it."""
import os
import tempfile


def write_atomic(path, write):
    """Call write(file object opened in binary mode) on a temporary file in path's directory, then rename it to
    path; on any error the temporary file is removed and the previous path (if any) is left untouched."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the file the usual permissions
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path, text):
    write_atomic(path, lambda f: f.write(text.encode("utf-8")))


def save_figure(fig, path, dpi):
    write_atomic(path, lambda f: fig.savefig(f, format="png", dpi=dpi))
