"""Cases for contrib_attention.cpp."""
from common import out_dir


def main():
    out_dir()


if __name__ == '__main__':
    main()
