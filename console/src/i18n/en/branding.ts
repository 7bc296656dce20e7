// The words of settings/BrandingInputs.tsx.
export const branding = {
  'brand.chooseType': 'Choose a PNG, JPEG or WebP image.',
  'brand.tooBig': 'Choose an image of at most {kb} KB.',
  'brand.unreadable': 'The image could not be read.',
  'brand.removeLogo': 'Remove the logo',
  'brand.ownColour': 'The console’s own',
  'brand.useOwn': 'Use the console’s colour',
  'brand.logoAlt': 'Tenant logo',
} as const
