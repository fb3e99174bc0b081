"""Cases for contrib_quant.cpp."""
from common import out_dir


def main():
    out_dir()


if __name__ == '__main__':
    main()
