"""The shop_oscar suite: django-oscar (tasks/products/oscar) as the sandbox's app."""
