"""WebShop: a faithful reimplementation of the original text shop (pages, actions, reward, data loading)."""

from .env import WebShopEnv

__all__ = ["WebShopEnv"]
