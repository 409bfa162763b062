import streamlit as st
st.write('dashboard')
