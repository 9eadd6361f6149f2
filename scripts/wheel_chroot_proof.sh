#!/usr/bin/env bash
# Proves that the wheel installs and runs Kiln's main job on a system with
# nothing but Python and pip: a minimal Debian root (debootstrap
# --variant=minbase) with python3 and python3-venv added, checked to hold no
# compiler and no -dev package. In it, a virtual environment installs the
# wheel (with jax and jaxlib from the Python package index, as a user's
# would) and scikit-learn (the job's data set), and trains the digits MLP on
# kiln and on cpu (examples/jax_digits/train.py, which fails below 90% test
# accuracy). Needs root (debootstrap, chroot, mounting /proc) and network to
# Debian's mirror and the package index; about 5 minutes and 1.5 GB.
#   sudo scripts/wheel_chroot_proof.sh [WHEEL]
# Without WHEEL it builds one (scripts/build_wheel.sh).
#   KILN_CHROOT_SUITE   the Debian suite of the root (default bookworm)
#   KILN_DEBIAN_MIRROR  its mirror (default http://deb.debian.org/debian)
#   KILN_CHROOT_KEEP=1  keeps the root afterwards (its path is printed)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SUITE="${KILN_CHROOT_SUITE:-bookworm}"
MIRROR="${KILN_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
if [ "$(id -u)" -ne 0 ]; then
  echo "wheel_chroot_proof: needs root (debootstrap, chroot, mount)" >&2
  exit 1
fi
if [ $# -ge 1 ]; then
  WHEEL="$(readlink -f "$1")"
else
  WHEEL="$("$ROOT/scripts/build_wheel.sh" | tail -n1)"
fi
[ -f "$WHEEL" ] || { echo "wheel_chroot_proof: no wheel at $WHEEL" >&2; exit 1; }
if ! command -v debootstrap >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

JAIL="$(mktemp -d /tmp/kiln-chroot.XXXXXX)"
cleanup() {
  umount "$JAIL/proc" 2>/dev/null || true
  if [ -n "${KILN_CHROOT_KEEP:-}" ]; then
    echo "wheel_chroot_proof: the root is kept at $JAIL"
  else
    rm -rf "$JAIL"
  fi
}
trap cleanup EXIT
in_jail() { chroot "$JAIL" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

echo "--- a minimal $SUITE root in $JAIL"
debootstrap --variant=minbase "$SUITE" "$JAIL" "$MIRROR" >"$JAIL.debootstrap.log" 2>&1 ||
  { tail -n 20 "$JAIL.debootstrap.log" >&2; exit 1; }
rm -f "$JAIL.debootstrap.log"
mount -t proc proc "$JAIL/proc"
cp /etc/resolv.conf "$JAIL/etc/resolv.conf"
echo "--- python3 and python3-venv (pip), nothing else"
in_jail apt-get update -qq
in_jail env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  python3 python3-venv >/dev/null
for tool in cc gcc g++ c++ clang ld make cmake; do
  if in_jail sh -c "command -v $tool" >/dev/null; then
    echo "wheel_chroot_proof: the root has $tool" >&2
    exit 1
  fi
done
dev_packages="$(in_jail dpkg-query -W -f '${Package}\n' | grep -E -- '-dev(:|$)' || true)"
if [ -n "$dev_packages" ]; then
  echo "wheel_chroot_proof: the root has -dev packages: $dev_packages" >&2
  exit 1
fi
echo "    $(in_jail dpkg-query -W -f '.\n' | wc -l) Debian packages, $(in_jail python3 --version)"

# pip inside uses the host's certificate authorities where the host's pip
# is told to (a proxy that re-signs), else its own.
PIP_ENV=()
if [ -n "${PIP_CERT:-}" ] && [ -f "$PIP_CERT" ]; then
  cp "$PIP_CERT" "$JAIL/etc/kiln-pip-ca.pem"
  PIP_ENV=(PIP_CERT=/etc/kiln-pip-ca.pem)
fi
mkdir -p "$JAIL/opt/job"
cp "$WHEEL" "$JAIL/opt/"
cp "$ROOT"/examples/jax_digits/*.py "$JAIL/opt/job/"
echo "--- pip install $(basename "$WHEEL") scikit-learn"
in_jail python3 -m venv /opt/venv
in_jail env "${PIP_ENV[@]}" /opt/venv/bin/pip install -q --disable-pip-version-check \
  "/opt/$(basename "$WHEEL")" scikit-learn
echo "--- the main job, on kiln and on cpu"
in_jail /opt/venv/bin/python /opt/job/train.py
echo "wheel_chroot_proof: the wheel installed and ran the main job in a root with only Python and pip"
